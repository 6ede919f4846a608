#include "kiln/serving/grpc/grpc_messages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "kiln/serving/grpc/tensor_proto.h"
#include "kiln/serving/request_limits.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kSignatureDefField = "signature_def";

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

template <typename Map>
std::set<std::string> keys_of(const Map& map) {
  std::set<std::string> keys;
  for (const auto& entry : map) keys.insert(entry.first);
  return keys;
}

std::set<std::string> difference(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> left;
  for (const std::string& key : a)
    if (!b.count(key)) left.insert(key);
  return left;
}

// TensorFlow Serving's VerifyRequestInputsSize: the inputs sent must be the signature's.
void check_input_names(const tfs::PredictRequest& request, const Signature& signature) {
  std::set<std::string> sent = keys_of(request.inputs()), wanted = keys_of(signature.inputs);
  if (sent == wanted) return;
  throw invalid(fmt::format(
      "input size does not match signature: {}!={} len({{{}}}) != len({{{}}}). Sent extra: "
      "{{{}}}. Missing but required: {{{}}}.",
      sent.size(), wanted.size(), fmt::join(sent, ","), fmt::join(wanted, ","),
      fmt::join(difference(sent, wanted), ","), fmt::join(difference(wanted, sent), ",")));
}

tensorflow::TensorInfo tensor_info(const std::string& name, const TensorSpec& spec) {
  tensorflow::TensorInfo info;
  info.set_name(name + ":0");  // as a graph's tensor reads; the REST metadata says the same
  info.set_dtype(tf_data_type(spec.dtype));
  for (int64_t size : spec.shape) info.mutable_tensor_shape()->add_dim()->set_size(size);
  return info;
}

}  // namespace

Route route_of(const tfs::ModelSpec* spec, RouteKind kind) {
  if (!spec) throw invalid("Missing ModelSpec");
  // TF Serving's words: its model lookup refuses a spec without a name, while its status looks
  // the empty name up and finds no version of it.
  if (spec->name().empty() && kind != RouteKind::kStatus)
    throw invalid("ModelSpec has no name specified.");
  Route route;
  route.kind = kind;
  route.model = spec->name();
  if (spec->has_version()) route.version = spec->version().value();
  if (spec->version_choice_case() == tfs::ModelSpec::kVersionLabel)
    route.label = spec->version_label();
  return route;
}

std::string signature_of(const tfs::ModelSpec& spec) {
  return spec.signature_name().empty() ? "serving_default" : spec.signature_name();
}

int64_t predict_values_claimed(const tfs::PredictRequest& request, const Signature& signature) {
  check_input_names(request, signature);
  int64_t claimed = 0;  // from the shapes, before any tensor is read
  for (const auto& [name, spec] : signature.inputs) {
    std::string what = "input '" + name + "'";
    claim_values(claimed, claimed_values(request.inputs().at(name), what), what);
  }
  return claimed;
}

int64_t raw_values_claimed(const tfs::PredictRequest& request) {
  int64_t claimed = 0;
  for (const auto& [name, tensor] : request.inputs()) {
    std::string what = "input '" + name + "'";
    claim_values(claimed, claimed_values(tensor, what), what);
  }
  return claimed;
}

HostTensors predict_inputs(const tfs::PredictRequest& request, const Signature& signature,
                           int64_t max_rows) {
  predict_values_claimed(request, signature);
  HostTensors inputs;
  for (const auto& [name, spec] : signature.inputs)
    inputs[name] = tensor_from_proto(request.inputs().at(name), name, spec, max_rows);
  int64_t rows = -1;
  for (const auto& [name, tensor] : inputs) {
    int64_t own = tensor.shape.empty() ? -1 : tensor.shape.front();
    if (rows >= 0 && own != rows)
      throw invalid(
          fmt::format("the inputs hold different numbers of examples: input '{}' has {}, "
                      "the ones before it {}",
                      name, own, rows));
    rows = own;
  }
  return inputs;
}

std::vector<std::string> predict_outputs(const tfs::PredictRequest& request,
                                         const Signature& signature) {
  std::vector<std::string> names;
  if (request.output_filter().empty()) {
    for (const auto& [name, output] : signature.outputs) names.push_back(name);
    return names;
  }
  std::set<std::string> seen;
  for (const std::string& alias : request.output_filter()) {
    if (!signature.outputs.count(alias))
      throw invalid(
          fmt::format("output tensor alias not found in signature: {} Outputs expected to be in "
                      "the set {{{}}}.",
                      alias, fmt::join(keys_of(signature.outputs), ",")));
    if (!seen.insert(alias).second) throw invalid("duplicate output tensor alias: " + alias);
    names.push_back(alias);
  }
  return names;
}

void fill_predict_response(const HostTensors& outputs, const std::vector<std::string>& names,
                           const tfs::ModelSpec& answered, tfs::PredictResponse& response) {
  for (const std::string& name : names)
    tensor_to_proto(outputs.at(name), (*response.mutable_outputs())[name]);
  *response.mutable_model_spec() = answered;
}

namespace {

// An input's examples, and the context each takes the features it lacks from (null: none).
std::pair<const google::protobuf::RepeatedPtrField<tensorflow::Example>*,
          const tensorflow::Example*>
examples_in(const tfs::Input& input) {
  if (input.has_example_list_with_context())
    return {&input.example_list_with_context().examples(),
            &input.example_list_with_context().context()};
  return {&input.example_list().examples(), nullptr};
}

}  // namespace

size_t examples_claimed(const tfs::Input& input, int64_t max_rows) {
  auto [examples, context] = examples_in(input);
  if (examples->empty()) throw invalid("Input is empty.");
  check_request_rows("the request", examples->size(), max_rows);
  // The context is copied into each example: bounded before it is (1.1 MB of context for 1,024
  // examples once cost a gigabyte).
  size_t copies = context ? context->ByteSizeLong() * size_t(examples->size()) : 0;
  if (copies > kMaxRequestCopyBytes)
    throw ServingError(
        StatusCode::kResourceExhausted,
        fmt::format("example_list_with_context: a context of {} bytes copied into each of {} "
                    "examples would be more than the {} bytes one request may expand to; send "
                    "fewer examples in a call, or a smaller context",
                    context->ByteSizeLong(), examples->size(), kMaxRequestCopyBytes));
  return input.ByteSizeLong() + copies;
}

std::vector<io::Features> examples_of(const tfs::Input& input, int64_t max_rows) {
  examples_claimed(input, max_rows);
  auto [examples, context] = examples_in(input);
  // Read back by kiln's one reader of tf.Example, so that an example means the same over gRPC and
  // in a TFRecord file.
  io::Features shared;
  if (context) shared = io::parse_example(context->SerializeAsString()).features;
  std::vector<io::Features> read;
  for (int i = 0; i < examples->size(); ++i) {
    io::Features features = io::parse_example((*examples)[i].SerializeAsString()).features;
    for (const auto& [name, feature] : shared) features.emplace(name, feature);  // own ones win
    read.push_back(std::move(features));
  }
  return read;
}

void fill_classification(const std::vector<std::vector<ScoredClass>>& classes,
                         tfs::ClassificationResult& result) {
  for (const std::vector<ScoredClass>& example : classes) {
    tfs::Classifications* classifications = result.add_classifications();
    for (const ScoredClass& scored : example) {
      tfs::Class* added = classifications->add_classes();
      added->set_label(scored.label);
      added->set_score(static_cast<float>(scored.score));
    }
  }
}

void fill_regression(const HostTensor& predictions, tfs::RegressionResult& result) {
  for (double value : predictions.numbers)
    result.add_regressions()->set_value(static_cast<float>(value));
}

void check_metadata_fields(const tfs::GetModelMetadataRequest& request) {
  if (request.metadata_field().empty())
    throw invalid("GetModelMetadataRequest must specify at least one metadata_field");
  for (const std::string& field : request.metadata_field())
    if (field != kSignatureDefField)
      throw invalid(fmt::format("Metadata field {} is not supported", field));
}

void fill_metadata(const tfs::GetModelMetadataRequest& request, const tfs::ModelSpec& answered,
                   const Signatures& signatures, tfs::GetModelMetadataResponse& response) {
  check_metadata_fields(request);
  tfs::SignatureDefMap defs;
  for (const auto& [name, signature] : signatures) {
    tensorflow::SignatureDef& def = (*defs.mutable_signature_def())[name];
    for (const auto& [input, spec] : signature.inputs)
      (*def.mutable_inputs())[input] = tensor_info(input, spec);
    for (const auto& [output, out] : signature.outputs)
      (*def.mutable_outputs())[output] = tensor_info(output, out.spec);
    def.set_method_name(method_of(signature));
  }
  *response.mutable_model_spec() = answered;
  (*response.mutable_metadata())[kSignatureDefField].PackFrom(defs);
}

void fill_status(const std::vector<int64_t>& versions, tfs::GetModelStatusResponse& response) {
  for (int64_t version : versions) {
    tfs::ModelVersionStatus* status = response.add_model_version_status();
    status->set_version(version);
    status->set_state(tfs::ModelVersionStatus::AVAILABLE);
    status->mutable_status()->set_error_code(tensorflow::error::OK);
  }
}

tfs::ModelSpec answered_spec(const std::string& model, int64_t version,
                             const std::string& signature) {
  tfs::ModelSpec spec;
  spec.set_name(model);
  spec.mutable_version()->set_value(version);
  spec.set_signature_name(signature);
  return spec;
}

}  // namespace kiln::serving
