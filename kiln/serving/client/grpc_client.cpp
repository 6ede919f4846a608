#include "kiln/serving/client/grpc_client.h"

#include <fmt/format.h>

#include <grpcpp/grpcpp.h>

#include <climits>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"
#include "kiln/serving/grpc/grpc_messages.h"
#include "kiln/serving/grpc/tensor_proto.h"
#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/rest/rest_route.h"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

namespace kiln::serving {
namespace {

constexpr const char* kScheme = "grpc://";

struct GrpcTarget {
  std::string address;  // HOST:PORT
  tfs::ModelSpec spec;
};

GrpcTarget parse_grpc_url(const std::string& url, const std::string& signature) {
  size_t path = url.find('/', std::char_traits<char>::length(kScheme));
  if (url.rfind(kScheme, 0) != 0 || path == std::string::npos)
    throw UsageError("--server takes grpc://HOST:PORT/v1/models/NAME, not " + url);
  GrpcTarget target;
  target.address = url.substr(std::char_traits<char>::length(kScheme),
                              path - std::char_traits<char>::length(kScheme));
  Route route;
  try {
    route = parse_route("GET", url.substr(path));
  } catch (const std::exception& e) {
    throw UsageError(
        fmt::format("--server {}: {} (the path is the REST API's: "
                    "/v1/models/NAME[/versions/N | /labels/L])",
                    url, e.what()));
  }
  target.spec.set_name(route.model);
  if (route.version) target.spec.mutable_version()->set_value(*route.version);
  if (route.label) target.spec.set_version_label(*route.label);
  target.spec.set_signature_name(signature);
  return target;
}

std::string error_line(const grpc::Status& status) {
  static const char* const kCodes[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  int code = status.error_code();
  std::string name = code >= 0 && code <= 16 ? kCodes[code] : std::to_string(code);
  return Json{{"error", status.error_message()}, {"code", name}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

void add_token(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
}

// The inputs of the signature called, as the server's metadata gives them.
std::map<std::string, TensorSpec> signature_inputs(tfs::PredictionService::Stub& stub,
                                                   const GrpcTarget& target,
                                                   const ClientOptions& options) {
  tfs::GetModelMetadataRequest request;
  *request.mutable_model_spec() = target.spec;
  request.mutable_model_spec()->clear_signature_name();
  request.add_metadata_field("signature_def");
  tfs::GetModelMetadataResponse response;
  grpc::ClientContext context;
  add_token(context, options.token);
  grpc::Status status = stub.GetModelMetadata(&context, request, &response);
  if (!status.ok())
    throw UsageError(
        fmt::format("--server {}: GetModelMetadata failed: {}", options.url, error_line(status)));
  tfs::SignatureDefMap defs;
  auto field = response.metadata().find("signature_def");
  if (field == response.metadata().end() || !field->second.UnpackTo(&defs))
    throw UsageError(fmt::format("--server {}: its metadata holds no signature_def", options.url));
  auto def = defs.signature_def().find(options.signature);
  if (def == defs.signature_def().end())
    throw UsageError(fmt::format("--server {}: the model has no signature \"{}\"", options.url,
                                 options.signature));
  std::map<std::string, TensorSpec> inputs;
  for (const auto& [name, info] : def->second.inputs()) {
    std::optional<DType> dtype = served_dtype(info.dtype());
    if (!dtype)
      throw UsageError(
          fmt::format("--server {}: input '{}' has a dtype kiln cannot send", options.url, name));
    TensorSpec spec(*dtype, {});
    for (const auto& dim : info.tensor_shape().dim()) spec.shape.push_back(dim.size());
    inputs[name] = spec;
  }
  return inputs;
}

// An instance as the signature takes it, with the inputs it names. A row of raw features
// leaves out a missing one (the server says what a model cannot do without), and what the
// signature does not list is passed over, as the REST API passes it over: a feature only a
// derived label reads, or one no training record held (the metadata lists neither).
struct NamedInstance {
  std::string text;
  std::map<std::string, TensorSpec> inputs;
};
NamedInstance inputs_named(const std::string& instance,
                           const std::map<std::string, TensorSpec>& inputs) {
  if (instance.find('{') == std::string::npos) return {instance, inputs};
  Json parsed;
  try {
    parsed = parse_json_text(instance);
  } catch (const std::exception&) {
    return {instance, inputs};  // the reader below words the error
  }
  if (!parsed.is_object()) return {instance, inputs};
  NamedInstance named;
  Json kept = Json::object();
  for (const auto& [name, spec] : inputs)
    if (parsed.contains(name)) {
      named.inputs[name] = spec;
      append_new_key(kept, name, parsed[name]);
    }
  if (named.inputs.empty()) return {instance, inputs};  // no input of it named: said below
  named.text = kept.dump();
  return named;
}

ClientAnswer predict_one(tfs::PredictionService::Stub& stub, const GrpcTarget& target,
                         const std::map<std::string, TensorSpec>& inputs,
                         const std::string& instance, const std::string& token) {
  tfs::PredictRequest request;
  *request.mutable_model_spec() = target.spec;
  try {
    NamedInstance named = inputs_named(instance, inputs);
    PredictRequest read =
        parse_predict_request("{\"instances\": [" + named.text + "]}", named.inputs);
    for (const auto& [name, tensor] : read.inputs)
      tensor_to_proto(tensor, (*request.mutable_inputs())[name]);
  } catch (const std::exception& e) {  // never sent: the line is no instance of the signature
    return {false, Json{{"error", e.what()}}.dump(-1, ' ', false, Json::error_handler_t::replace)};
  }
  tfs::PredictResponse response;
  grpc::ClientContext context;
  add_token(context, token);
  grpc::Status status = stub.Predict(&context, request, &response);
  if (!status.ok()) return {false, error_line(status)};
  HostTensors outputs;
  for (const auto& [name, proto] : response.outputs())
    outputs[name] = tensor_from_answer(proto, "output '" + name + "'");
  std::vector<std::string> rows = prediction_rows(outputs);
  if (rows.size() != 1) return {false, Json{{"error", "the answer is not one example's"}}.dump()};
  return {true, rows.front()};
}

}  // namespace

ClientReport run_grpc_client(const ClientOptions& options) {
  GrpcTarget target = parse_grpc_url(options.url, options.signature);
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(INT_MAX);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(target.address, grpc::InsecureChannelCredentials(), arguments);
  auto stub = tfs::PredictionService::NewStub(channel);
  std::map<std::string, TensorSpec> inputs = signature_inputs(*stub, target, options);
  return send_lines(options, [&]() -> InstanceSender {
    return [&](const std::string& instance) {
      return predict_one(*stub, target, inputs, instance, options.token);
    };
  });
}

}  // namespace kiln::serving
