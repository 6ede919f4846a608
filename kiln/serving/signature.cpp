#include "kiln/serving/signature.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "kiln/core/error.h"
#include "kiln/core/json_keys.h"
#include "kiln/core/json_text.h"
#include "kiln/io/image_input.h"

namespace kiln::serving {
namespace {

const std::vector<std::pair<OutputOp, const char*>>& op_names() {
  static const std::vector<std::pair<OutputOp, const char*>> names = {
      {OutputOp::kIdentity, "identity"},    {OutputOp::kSoftmax, "softmax"},
      {OutputOp::kSigmoid, "sigmoid"},      {OutputOp::kArgmax, "argmax"},
      {OutputOp::kAboveHalf, "above_half"}, {OutputOp::kArgmaxLabel, "argmax_label"},
      {OutputOp::kLayer, "layer"}};
  return names;
}

Json spec_json(const TensorSpec& spec) {
  Json json{{"dtype", dtype_name(spec.dtype)}, {"shape", spec.shape}};
  if (spec.image) json["image"] = io::image_input_json(*spec.image);
  return json;
}

// Reads one input's or output's dtype and shape; `where` names it in errors.
TensorSpec parse_spec(const Json& json, const std::string& file, const std::string& where,
                      bool output) {
  auto fail = [&](const std::string& problem) -> TensorSpec {
    throw DataError(file, -1, -1, fmt::format("signatures: {}: {}", where, problem));
  };
  if (!json.is_object() || !json.contains("dtype") || !json["dtype"].is_string() ||
      !json.contains("shape") || !json["shape"].is_array())
    return fail("expected {dtype: NAME, shape: [SIZES]}, got " + show_value(json));
  std::vector<std::string> keys = {"dtype", "shape", "image"};
  if (output) keys.insert(keys.end(), {"from", "op", "layer"});
  if (std::string unknown = unknown_key_problem(json, keys, output ? "an output" : "an input");
      !unknown.empty())
    return fail(unknown);
  TensorSpec spec;
  std::optional<DType> dtype = dtype_named(json["dtype"].get<std::string>());
  if (!dtype)
    return fail(fmt::format("unknown dtype {}; one of float32, float64, int32, int64, bool, string",
                            show_value(json["dtype"])));
  spec.dtype = *dtype;
  for (const Json& size : json["shape"]) {
    if (!size.is_number_integer() || size.get<int64_t>() < -1)
      return fail("a shape holds sizes, -1 where any size goes, not " + show_value(size));
    spec.shape.push_back(size.get<int64_t>());
  }
  if (spec.shape.empty() || spec.shape.front() != -1)
    return fail("the first dimension is the batch's: -1");
  if (json.contains("image")) {
    spec.image = io::parse_image_input(json["image"], file);
    std::vector<int64_t> example(spec.shape.begin() + 1, spec.shape.end());
    if (example != spec.image->shape())
      return fail(
          fmt::format("an image input of {} by {} pixels in {} channels ({}) has the "
                      "shape [-1, {}], not {}",
                      spec.image->height, spec.image->width, spec.image->channels,
                      spec.image->channels_first ? "chw" : "hwc",
                      fmt::join(spec.image->shape(), ", "), show_value(json["shape"])));
  }
  return spec;
}

OutputOp parse_op(const Json& json, const std::string& file, const std::string& where) {
  std::string known;
  for (const auto& [op, name] : op_names()) {
    if (json.is_string() && json.get<std::string>() == name) return op;
    known += std::string(known.empty() ? "" : ", ") + name;
  }
  throw DataError(
      file, -1, -1,
      fmt::format("signatures: {}: unknown op {}; one of {}", where, show_value(json), known));
}

std::string text_or_empty(const Json& json, const char* key, const std::string& file,
                          const std::string& where) {
  if (!json.contains(key)) return "";
  if (!json[key].is_string())
    throw DataError(
        file, -1, -1,
        fmt::format("signatures: {}: {} is a name, not {}", where, key, show_value(json[key])));
  return json[key].get<std::string>();
}

// The dtype an output's op gives: text for labels, int64 for class ids, numbers otherwise. A
// string declared for numbers made predict and serve read strings that were never written.
void check_output_dtype(const SignatureOutput& out, const std::string& file,
                        const std::string& where) {
  DType dtype = out.spec.dtype;
  bool fits = false;
  const char* wanted = "";
  switch (out.op) {
    case OutputOp::kArgmaxLabel:
      fits = dtype == DType::kString;
      wanted = "string";
      break;
    case OutputOp::kArgmax:
    case OutputOp::kAboveHalf:
      fits = dtype == DType::kInt64;
      wanted = "int64";
      break;
    case OutputOp::kSoftmax:
    case OutputOp::kSigmoid:
      fits = dtype == DType::kFloat32 || dtype == DType::kFloat64;
      wanted = "float32 or float64";
      break;
    default:  // identity, layer: the model's own numbers
      fits = dtype != DType::kString;
      wanted = "a number type";
  }
  if (!fits)
    throw DataError(file, -1, -1,
                    fmt::format("signatures: {}: op {} gives {}, not {}", where,
                                output_op_name(out.op), wanted, dtype_name(dtype)));
}

Signature parse_signature(const Json& json, const std::string& file, const std::string& name) {
  if (!json.is_object() || !json.contains("inputs") || !json["inputs"].is_object() ||
      !json.contains("outputs") || !json["outputs"].is_object() || json["outputs"].empty())
    throw DataError(
        file, -1, -1,
        fmt::format("signatures: {}: expected {{inputs: {{...}}, outputs: {{...}}}}", name));
  if (std::string unknown = unknown_key_problem(json, {"inputs", "outputs"}, "a signature");
      !unknown.empty())
    throw DataError(file, -1, -1, fmt::format("signatures: {}: {}", name, unknown));
  Signature signature;
  for (const auto& [input, spec] : json["inputs"].items())
    signature.inputs[input] = parse_spec(spec, file, name + ".inputs." + input, false);
  for (const auto& [output, spec] : json["outputs"].items()) {
    std::string where = name + ".outputs." + output;
    SignatureOutput out;
    out.spec = parse_spec(spec, file, where, true);
    out.from = text_or_empty(spec, "from", file, where);
    out.op = spec.contains("op") ? parse_op(spec["op"], file, where) : OutputOp::kIdentity;
    out.layer = text_or_empty(spec, "layer", file, where);
    check_output_dtype(out, file, where);
    signature.outputs[output] = out;
  }
  return signature;
}

}  // namespace

std::string method_of(const Signature& signature) {
  return signature.method.empty() ? kPredictMethod : signature.method;
}

std::string output_op_name(OutputOp op) {
  for (const auto& [known, name] : op_names())
    if (known == op) return name;
  return "?";
}

Json signatures_json(const Signatures& signatures) {
  Json all = Json::object();
  for (const auto& [name, signature] : signatures) {
    Json inputs = Json::object(), outputs = Json::object();
    // A map's keys, each new: appended, not searched for (model.yaml may list thousands).
    for (const auto& [input, spec] : signature.inputs)
      append_new_key(inputs, input, spec_json(spec));
    for (const auto& [output, out] : signature.outputs) {
      Json item = spec_json(out.spec);
      item["from"] = out.from;
      item["op"] = output_op_name(out.op);
      if (out.op == OutputOp::kLayer) item["layer"] = out.layer;
      append_new_key(outputs, output, std::move(item));
    }
    append_new_key(all, name, Json{{"inputs", inputs}, {"outputs", outputs}});
  }
  return all;
}

Signatures parse_signatures(const Json& json, const std::string& file) {
  if (!json.is_object() || json.empty())
    throw DataError(file, -1, -1, "signatures: expected a mapping of names to signatures");
  Signatures signatures;
  for (const auto& [name, signature] : json.items())
    signatures[name] = parse_signature(signature, file, name);
  return signatures;
}

}  // namespace kiln::serving
