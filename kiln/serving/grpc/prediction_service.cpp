#include "kiln/serving/grpc/prediction_service.h"

#include <fmt/format.h>

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

}  // namespace

FoundVersion PredictionService::find(GrpcCall& call, const tfs::ModelSpec* spec,
                                     RouteKind kind) const {
  Route route = route_of(spec, kind);
  call.set_model(route.model);
  return shared_.parts.table.find(route);
}

const ExampleEncoder& PredictionService::encoder_of(const FoundVersion& found,
                                                    const std::string& model) {
  if (const ExampleEncoder* encoder = found.servable->examples()) return *encoder;
  throw ServingError(
      StatusCode::kInvalidArgument,
      fmt::format("model {} reads tensors, not examples of named features: Classify and Regress "
                  "answer models trained on feature columns (data.columns); use Predict",
                  model));
}

void PredictionService::submit(GrpcCall& call, FoundVersion found, const std::string& signature,
                               HostTensors inputs, std::function<void(const HostTensors&)> fill) {
  Servable& servable = *found.servable;
  servable.predict_async(signature, std::move(inputs),
                         [&call, fill = std::move(fill), hold = std::move(found.servable)](
                             HostTensors outputs, std::exception_ptr error) mutable {
                           call.hold(std::move(hold));
                           call.finish_with([&] {
                             if (error) std::rethrow_exception(error);
                             fill(outputs);
                           });
                         });
}

grpc::ServerUnaryReactor* PredictionService::Predict(grpc::CallbackServerContext* context,
                                                     const tfs::PredictRequest* request,
                                                     tfs::PredictResponse* response) {
  auto* call = new GrpcCall(context, shared_, "predict");
  call->start([&] {
    const tfs::ModelSpec* spec = request->has_model_spec() ? &request->model_spec() : nullptr;
    FoundVersion found = find(*call, spec, RouteKind::kPredict);
    std::string name = signature_of(*spec);
    const Signature& signature = predict_signature(found.servable->signatures(), name);
    HostTensors inputs = predict_inputs(*request, signature, max_rows_);
    std::vector<std::string> outputs = predict_outputs(*request, signature);
    tfs::ModelSpec answered = answered_spec(spec->name(), found.version, name);
    submit(*call, std::move(found), name, std::move(inputs),
           [response, outputs, answered](const HostTensors& given) {
             fill_predict_response(given, outputs, answered, *response);
           });
  });
  return call;
}

grpc::ServerUnaryReactor* PredictionService::Classify(grpc::CallbackServerContext* context,
                                                      const tfs::ClassificationRequest* request,
                                                      tfs::ClassificationResponse* response) {
  auto* call = new GrpcCall(context, shared_, "classify");
  call->start([&] {
    const tfs::ModelSpec* spec = request->has_model_spec() ? &request->model_spec() : nullptr;
    FoundVersion found = find(*call, spec, RouteKind::kClassify);
    const ExampleEncoder& encoder = encoder_of(found, spec->name());
    std::string name = signature_of(*spec);
    const Signatures& signatures = found.servable->signatures();
    check_examples_signature(signatures, name);
    const SignatureOutput& output = classify_output(signatures, name);
    HostTensors inputs = encoder.encode(examples_of(request->input(), max_rows_));
    *response->mutable_model_spec() = answered_spec(spec->name(), found.version, name);
    const std::vector<std::string>& labels = found.servable->labels();
    submit(*call, std::move(found), name, std::move(inputs),
           [response, &output, &labels](const HostTensors& given) {
             fill_classification(classify_results(output, given.at("probabilities"), labels),
                                 *response->mutable_result());
           });
  });
  return call;
}

grpc::ServerUnaryReactor* PredictionService::Regress(grpc::CallbackServerContext* context,
                                                     const tfs::RegressionRequest* request,
                                                     tfs::RegressionResponse* response) {
  auto* call = new GrpcCall(context, shared_, "regress");
  call->start([&] {
    const tfs::ModelSpec* spec = request->has_model_spec() ? &request->model_spec() : nullptr;
    FoundVersion found = find(*call, spec, RouteKind::kRegress);
    const ExampleEncoder& encoder = encoder_of(found, spec->name());
    std::string name = signature_of(*spec);
    check_examples_signature(found.servable->signatures(), name);
    regress_output(found.servable->signatures(), name);
    HostTensors inputs = encoder.encode(examples_of(request->input(), max_rows_));
    *response->mutable_model_spec() = answered_spec(spec->name(), found.version, name);
    submit(*call, std::move(found), name, std::move(inputs), [response](const HostTensors& given) {
      fill_regression(given.at("predictions"), *response->mutable_result());
    });
  });
  return call;
}

grpc::ServerUnaryReactor* PredictionService::GetModelMetadata(
    grpc::CallbackServerContext* context, const tfs::GetModelMetadataRequest* request,
    tfs::GetModelMetadataResponse* response) {
  auto* call = new GrpcCall(context, shared_, "metadata");
  call->start([&] {
    const tfs::ModelSpec* spec = request->has_model_spec() ? &request->model_spec() : nullptr;
    FoundVersion found = find(*call, spec, RouteKind::kMetadata);
    call->finish_with([&] {
      fill_metadata(*request, answered_spec(spec->name(), found.version, ""),
                    found.servable->signatures(), *response);
    });
  });
  return call;
}

}  // namespace kiln::serving
