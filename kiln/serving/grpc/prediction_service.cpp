#include "kiln/serving/grpc/prediction_service.h"

#include <fmt/format.h>

#include "kiln/serving/grpc/method_call.h"
#include "kiln/serving/grpc/raw_predict.h"
#include "kiln/serving/held_bytes.h"
#include "kiln/serving/prediction_api.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

const Signature& predict_signature(const Signatures& signatures, const std::string& name) {
  auto found = signatures.find(name);
  if (found == signatures.end())
    throw ServingError(StatusCode::kFailedPrecondition,
                       fmt::format("Serving signature key \"{}\" not found.", name));
  return found->second;
}

// Classify and Regress name a missing signature as TensorFlow Serving's classifier does.
void check_examples_signature(const Signatures& signatures, const std::string& name) {
  if (!signatures.count(name))
    throw ServingError(StatusCode::kInvalidArgument,
                       "No signature was found with the name: " + name);
}

template <class Message>
const tfs::ModelSpec* spec_of(const Message& request) {
  return request.has_model_spec() ? &request.model_spec() : nullptr;
}

}  // namespace

void PredictionService::add_methods(GrpcMethods& methods) const {
  const std::string service = "/tensorflow.serving.PredictionService/";
  add_method(methods, service + "Predict", shared_, "predict", this, &PredictionService::predict);
  add_method(methods, service + "Classify", shared_, "classify", this,
             &PredictionService::classify);
  add_method(methods, service + "Regress", shared_, "regress", this, &PredictionService::regress);
  add_method(methods, service + "GetModelMetadata", shared_, "metadata", this,
             &PredictionService::metadata);
  // Answered by name rather than as a path not served, as TensorFlow Serving's service has it.
  add_method(methods, service + "MultiInference", shared_, "", this,
             &PredictionService::multi_inference);
}

void PredictionService::multi_inference(GrpcCall& call, const tfs::MultiInferenceRequest&,
                                        tfs::MultiInferenceResponse&) const {
  call.finish_with(
      [] { throw ServingError(StatusCode::kUnimplemented, "kiln does not serve MultiInference"); });
}

FoundVersion PredictionService::find(GrpcCall& call, const tfs::ModelSpec* spec,
                                     RouteKind kind) const {
  Route route = route_of(spec, kind);
  call.set_model(route.model);
  return shared_.parts.table.find(route);
}

void PredictionService::submit(GrpcCall& call, FoundVersion found, const std::string& signature,
                               HostTensors inputs, std::function<void(const HostTensors&)> fill) {
  serving::submit(std::move(found), signature, std::move(inputs), call.abandoned(),
                  [&call, fill = std::move(fill)](HostTensors outputs, std::exception_ptr error,
                                                  std::shared_ptr<const void> servable) {
                    call.hold(std::move(servable));
                    call.finish_with([&] {
                      if (error) std::rethrow_exception(error);
                      fill(outputs);
                    });
                  });
}

void PredictionService::predict(GrpcCall& call, const tfs::PredictRequest& request,
                                tfs::PredictResponse& response) const {
  FoundVersion found = find(call, spec_of(request), RouteKind::kPredict);
  std::string name = signature_of(request.model_spec());
  const Signature& signature = predict_signature(found.servable->signatures(), name);
  // Room for what the tensors claim, before they are read: a call of 230 bytes may claim 3 MB.
  bool through_columns = found.servable->examples() != nullptr;
  size_t claimed = size_t(through_columns ? raw_values_claimed(request)
                                          : predict_values_claimed(request, signature)) *
                   sizeof(double);
  refuse_without_room(shared_.parts.held, claimed);
  off_loop(call, claimed, through_columns, [this, &call, &request, &response, found, name] {
    prepare_predict(call, request, response, found, name);
  });
}

void PredictionService::prepare_predict(GrpcCall& call, const tfs::PredictRequest& request,
                                        tfs::PredictResponse& response, FoundVersion found,
                                        const std::string& name) const {
  const Signature& signature = predict_signature(found.servable->signatures(), name);
  const ExampleEncoder* encoder = found.servable->examples();
  std::optional<std::vector<io::Features>> raw;
  if (encoder)
    raw = raw_predict_examples(request, signature, encoder->features(), encoder->raw_inputs(),
                               max_rows_);
  HostTensors inputs = raw ? encoder->encode(*raw) : predict_inputs(request, signature, max_rows_);
  std::vector<std::string> outputs = predict_outputs(request, signature);
  tfs::ModelSpec answered = answered_spec(request.model_spec().name(), found.version, name);
  submit(call, std::move(found), name, std::move(inputs),
         [&response, outputs, answered](const HostTensors& given) {
           fill_predict_response(given, outputs, answered, response);
         });
}

// Expanding a call of 230 bytes to 3 MB takes about 4 ms: 5,000 of them held the port's loop
// for 35 s, and no other client of that loop was answered meanwhile. Columns cost more per row:
// 3,000 Predicts of 1,000 penguins, 32 KB each, held it 5.7 s: examples go at 4 KiB.
void PredictionService::off_loop(GrpcCall& call, size_t claimed, bool through_columns,
                                 std::function<void()> prepare) const {
  bool small = claimed < (through_columns ? OffLoopWorkers::kMinExamplesBytesOffLoop
                                          : OffLoopWorkers::kMinBodyBytesOffLoop);
  if (!preparing_ || small) return prepare();
  bool posted = preparing_->post(claimed, [&call, prepare] {
    if (net::is_abandoned(call.abandoned()))
      return call.finish_with([] { std::rethrow_exception(client_gone_error()); });
    try {
      prepare();
    } catch (...) {
      std::exception_ptr error = std::current_exception();
      call.finish_with([error] { std::rethrow_exception(error); });
    }
  });
  if (!posted)
    throw ServingError(StatusCode::kResourceExhausted,
                       fmt::format("the server holds {} MiB of requests waiting to be read "
                                   "(--max-pending-bytes); try again later",
                                   preparing_->waiting_cost() >> 20));
}

void PredictionService::classify(GrpcCall& call, const tfs::ClassificationRequest& request,
                                 tfs::ClassificationResponse& response) const {
  FoundVersion found = find(call, spec_of(request), RouteKind::kClassify);
  size_t claimed = examples_claimed(request.input(), max_rows_);
  refuse_without_room(shared_.parts.held, claimed);
  const std::string& model = request.model_spec().name();
  const ExampleEncoder& encoder = examples_encoder(found, model, ExamplesApi::kGrpc);
  std::string name = signature_of(request.model_spec());
  const Signatures& signatures = found.servable->signatures();
  check_examples_signature(signatures, name);
  const SignatureOutput& output = classify_output(signatures, name, ExamplesApi::kGrpc);
  *response.mutable_model_spec() = answered_spec(model, found.version, name);
  // `found` holds the version, and with it the encoder and the output.
  off_loop(call, claimed, true, [this, &call, &request, &response, &encoder, &output, found, name] {
    HostTensors inputs = encoder.encode(examples_of(request.input(), max_rows_));
    const std::vector<std::string>& labels = found.servable->labels();
    submit(call, found, name, std::move(inputs),
           [&response, &output, &labels](const HostTensors& given) {
             fill_classification(classify_results(output, given.at("probabilities"), labels),
                                 *response.mutable_result());
           });
  });
}

void PredictionService::regress(GrpcCall& call, const tfs::RegressionRequest& request,
                                tfs::RegressionResponse& response) const {
  FoundVersion found = find(call, spec_of(request), RouteKind::kRegress);
  size_t claimed = examples_claimed(request.input(), max_rows_);
  refuse_without_room(shared_.parts.held, claimed);
  const std::string& model = request.model_spec().name();
  const ExampleEncoder& encoder = examples_encoder(found, model, ExamplesApi::kGrpc);
  std::string name = signature_of(request.model_spec());
  check_examples_signature(found.servable->signatures(), name);
  regress_output(found.servable->signatures(), name, ExamplesApi::kGrpc);
  *response.mutable_model_spec() = answered_spec(model, found.version, name);
  off_loop(call, claimed, true, [this, &call, &request, &response, &encoder, found, name] {
    HostTensors inputs = encoder.encode(examples_of(request.input(), max_rows_));
    submit(call, found, name, std::move(inputs), [&response](const HostTensors& given) {
      fill_regression(given.at("predictions"), *response.mutable_result());
    });
  });
}

void PredictionService::metadata(GrpcCall& call, const tfs::GetModelMetadataRequest& request,
                                 tfs::GetModelMetadataResponse& response) const {
  // TensorFlow Serving asks for the fields after the spec and before the model's name.
  if (spec_of(request)) check_metadata_fields(request);
  FoundVersion found = find(call, spec_of(request), RouteKind::kMetadata);
  call.finish_with([&] {
    fill_metadata(request, answered_spec(request.model_spec().name(), found.version, ""),
                  shown_signatures(*found.servable), response);
  });
}

}  // namespace kiln::serving
