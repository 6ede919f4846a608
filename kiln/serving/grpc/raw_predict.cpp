#include "kiln/serving/grpc/raw_predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "kiln/serving/grpc/tensor_proto.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

bool sends_tensors(const tensorflow::serving::PredictRequest& request, const Signature& signature) {
  if (request.inputs().size() != signature.inputs.size()) return false;
  for (const auto& [name, spec] : signature.inputs)
    if (!request.inputs().count(name)) return false;
  return true;
}

// The examples a tensor's first dimension counts, read from its shape before any value.
int64_t examples_in(const tensorflow::TensorProto& proto, const std::string& name) {
  if (proto.tensor_shape().dim_size() == 0)
    throw invalid(
        fmt::format("input '{}' is a scalar; a feature's tensor has the examples as "
                    "its first dimension (shape [N] or [N, values])",
                    name));
  return proto.tensor_shape().dim(0).size();
}

// Values [begin, begin + count) of `tensor` as one feature.
io::Feature feature_of(const HostTensor& tensor, size_t begin, size_t count) {
  io::Feature feature;
  switch (tensor.dtype) {
    case DType::kString:
      feature.kind = io::Feature::Kind::kBytes;
      feature.bytes.assign(tensor.strings.begin() + begin, tensor.strings.begin() + begin + count);
      break;
    case DType::kFloat32:
    case DType::kFloat64:
      feature.kind = io::Feature::Kind::kFloat;
      for (size_t i = begin; i < begin + count; ++i)
        feature.floats.push_back(static_cast<float>(tensor.numbers[i]));
      break;
    default:  // integers and booleans, as TensorFlow Serving's JSON makes them
      feature.kind = io::Feature::Kind::kInt64;
      for (size_t i = begin; i < begin + count; ++i)
        feature.ints.push_back(static_cast<int64_t>(tensor.numbers[i]));
      break;
  }
  return feature;
}

}  // namespace

std::optional<std::vector<io::Features>> raw_predict_examples(
    const tensorflow::serving::PredictRequest& request, const Signature& signature,
    const std::vector<std::string>& features, int64_t max_rows) {
  if (request.inputs().empty() || sends_tensors(request, signature)) return std::nullopt;
  std::map<std::string, const tensorflow::TensorProto*> sent;  // in order, for the messages
  for (const auto& [name, proto] : request.inputs()) sent[name] = &proto;
  int64_t rows = -1;
  for (const auto& [name, proto] : sent) {
    if (std::find(features.begin(), features.end(), name) == features.end())
      throw invalid(fmt::format("input '{}' is no feature the model reads; it reads {}", name,
                                fmt::join(features, ", ")));
    int64_t own = examples_in(*proto, name);
    if (rows >= 0 && own != rows)
      throw invalid(
          fmt::format("the inputs hold different numbers of examples: input '{}' has "
                      "{}, the ones before it {}",
                      name, own, rows));
    rows = own;
  }
  if (rows <= 0) throw invalid("Input is empty.");
  if (rows > max_rows)
    throw invalid(
        fmt::format("the request has {} examples; this server takes at most {} in one "
                    "request (--max-request-rows)",
                    rows, max_rows));
  std::vector<io::Features> examples(static_cast<size_t>(rows));
  for (const auto& [name, proto] : sent) {
    HostTensor tensor = tensor_from_answer(*proto, "input '" + name + "'");
    auto per_example = static_cast<size_t>(tensor.size() / rows);
    for (size_t i = 0; i < examples.size(); ++i)
      examples[i][name] = feature_of(tensor, i * per_example, per_example);
  }
  return examples;
}

}  // namespace kiln::serving
