#include "kiln/serving/grpc/raw_predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "kiln/serving/grpc/tensor_proto.h"
#include "kiln/serving/request_limits.h"
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

std::vector<int64_t> dims_of(const tensorflow::TensorShapeProto& shape) {
  std::vector<int64_t> sizes;
  for (const auto& dim : shape.dim()) sizes.push_back(dim.size());
  return sizes;
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

// A feature's tensor against the shape the training records gave it ([-1] for one value per
// example, [-1, N] for N, [-1, -1] when it varies), when the export knows it: all its dimensions,
// not only the examples', so that one value cannot claim 2^24 of an example's.
void check_raw_shape(const tensorflow::TensorProto& proto,
                     const std::map<std::string, TensorSpec>& raw_inputs, const std::string& name) {
  auto known = raw_inputs.find(name);
  if (known == raw_inputs.end()) return;
  const tensorflow::TensorShapeProto& shape = proto.tensor_shape();
  int64_t per_example = 1;
  for (int i = 1; i < shape.dim_size(); ++i)
    per_example *= std::max<int64_t>(shape.dim(i).size(), 0);
  const std::vector<int64_t>& spec = known->second.shape;
  int64_t expected = spec.size() == 2 ? spec[1] : 1;
  bool fits = shape.dim_size() <= 2 && (expected < 0 || per_example == expected);
  if (!fits)
    throw invalid(fmt::format(
        "input '{}': shape [{}] does not fit the feature's [{}] (-1: any size; [N] is taken for "
        "[N, 1])",
        name, fmt::join(dims_of(shape), ", "), fmt::join(spec, ", ")));
}

}  // namespace

std::optional<std::vector<io::Features>> raw_predict_examples(
    const tensorflow::serving::PredictRequest& request, const Signature& signature,
    const std::vector<std::string>& features, const std::map<std::string, TensorSpec>& raw_inputs,
    int64_t max_rows) {
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
  check_request_rows("the request", rows, max_rows);
  int64_t claimed = 0;  // from the shapes, before any tensor is read
  for (const auto& [name, proto] : sent) {
    std::string what = "input '" + name + "'";
    // Claimed first: claimed_values() bounds the dimensions, so their product cannot overflow.
    claim_values(claimed, claimed_values(*proto, what), what);
    check_raw_shape(*proto, raw_inputs, name);
  }
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
