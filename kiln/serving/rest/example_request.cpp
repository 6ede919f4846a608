#include "kiln/serving/rest/example_request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/core/text_codec.h"
#include "kiln/serving/request_limits.h"
#include "kiln/serving/rest/request_json.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

using Kind = io::Feature::Kind;

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

// The kind one JSON value makes, and the value added to `feature` (whose kind it must match,
// save integers among floats).
void add_value(const Json& value, io::Feature& feature, const std::string& where) {
  double number = 0;
  Kind kind = Kind::kNone;
  if (value.is_number_integer() || value.is_number_unsigned() || value.is_boolean())
    kind = Kind::kInt64;
  else if (value.is_number_float() || non_finite_number(value, number))
    kind = Kind::kFloat;
  else if (value.is_string() || (value.is_object() && value.size() == 1 && value.contains("b64")))
    kind = Kind::kBytes;
  else
    throw invalid(
        fmt::format("{}: {} is not a feature value (a number, a bool, a string, "
                    "{{\"b64\": ...}} or a list of one of them)",
                    where, quoted_value(value)));
  if (feature.kind == Kind::kNone) feature.kind = kind;
  if (feature.kind == Kind::kInt64 && kind == Kind::kFloat) {  // the list holds decimals too
    for (int64_t i : feature.ints) feature.floats.push_back(static_cast<float>(i));
    feature.ints.clear();
    feature.kind = Kind::kFloat;
  }
  if (feature.kind == Kind::kFloat && kind == Kind::kInt64) kind = Kind::kFloat;
  if (kind != feature.kind)
    throw invalid(fmt::format("{}: {} is a {} in a list of {}; a feature's values are of one type",
                              where, quoted_value(value), io::feature_kind_name(kind),
                              io::feature_kind_name(feature.kind)));
  if (kind == Kind::kInt64) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX))
      throw invalid(fmt::format("{}: {} does not fit an int64", where, quoted_value(value)));
    feature.ints.push_back(value.is_boolean() ? int64_t(value.get<bool>()) : value.get<int64_t>());
  } else if (kind == Kind::kFloat) {
    double x = value.is_number() ? value.get<double>() : number;
    // A tf.Example float is a float32: 1e39 would become infinity unseen.
    if (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())
      throw invalid(fmt::format("{}: {} is beyond float32 (at most 3.4e38 in magnitude)", where,
                                quoted_value(value)));
    feature.floats.push_back(static_cast<float>(x));
  } else if (value.is_string()) {
    feature.bytes.push_back(value.get<std::string>());
  } else {
    const Json& text = value.at("b64");
    std::optional<std::string> bytes =
        text.is_string() ? base64_decode(text.get<std::string>()) : std::nullopt;
    if (!bytes)
      throw invalid(fmt::format("{}: {} is not valid base64", where, quoted_value(value)));
    feature.bytes.push_back(std::move(*bytes));
  }
}

// An object of features: {name: value|list, ...}.
io::Features features_of(const Json& object, const std::string& where) {
  if (!object.is_object() || non_finite_token(object) ||
      (object.size() == 1 && object.contains("b64")))
    throw invalid(
        fmt::format("{} must be an object of feature values; got {}", where, quoted_value(object)));
  io::Features features;
  for (const auto& [name, value] : object.items())
    features[name] = feature_from_json(value, fmt::format("{} feature \"{}\"", where, name));
  return features;
}

std::string signature_name_of(const Json& request) {
  if (!request.contains("signature_name")) return "serving_default";
  if (!request["signature_name"].is_string())
    throw invalid("'signature_name' key must be a string value");
  return request["signature_name"].get<std::string>();
}

Json request_object(const std::string& body, const char* expected) {
  Json request = parse_request_json(body);
  if (!request.is_object())
    throw invalid(fmt::format("the request body must be a JSON object with {}; got {}", expected,
                              quoted_value(request)));
  return request;
}

// Whether an instance or columnar object names the signature's tensors rather than features.
bool names_tensors(const Json& object, const std::vector<std::string>& features,
                   const std::set<std::string>& tensor_inputs) {
  if (!object.is_object() || object.empty() || non_finite_token(object) || object.contains("b64"))
    return true;
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  bool any_feature = std::any_of(keys.begin(), keys.end(), [&](const std::string& key) {
    return std::find(features.begin(), features.end(), key) != features.end();
  });
  return keys == tensor_inputs && !any_feature;
}

void check_known(const io::Features& example, const std::vector<std::string>& features,
                 const std::string& where) {
  for (const auto& [name, feature] : example)
    if (std::find(features.begin(), features.end(), name) == features.end())
      throw invalid(fmt::format("{}: the model reads no feature \"{}\"; it reads {}", where, name,
                                fmt::join(features, ", ")));
}

// The context is copied into each example: bounded before it is (600 KB of context keys for
// 150,000 examples would be nine billion copies).
void check_context_copies(const io::Features& context, size_t examples) {
  size_t bytes = 0;  // what one copy holds, near enough
  for (const auto& [name, feature] : context) {
    bytes += name.size() + sizeof(io::Feature) + feature.floats.size() * sizeof(float) +
             feature.ints.size() * sizeof(int64_t);
    for (const std::string& value : feature.bytes) bytes += sizeof(std::string) + value.size();
  }
  if (bytes > 0 && examples > kMaxRequestCopyBytes / bytes)
    throw ServingError(
        StatusCode::kResourceExhausted,
        fmt::format("'context' of about {} bytes copied into each of {} examples would be more "
                    "than the {} bytes one request may expand to; send fewer examples in a "
                    "request, or a smaller context",
                    bytes, examples, kMaxRequestCopyBytes));
}

// Columnar raw features: {feature: [one value or list per example], ...}.
std::vector<io::Features> columnar_examples(const Json& inputs) {
  std::vector<io::Features> examples;
  std::string first;
  for (const auto& [name, values] : inputs.items()) {
    if (!values.is_array())
      throw invalid(
          fmt::format("'inputs' feature \"{}\" must be a list with a value for each "
                      "example; got {}",
                      name, quoted_value(values)));
    if (first.empty()) {
      first = name;
      examples.resize(values.size());
    } else if (values.size() != examples.size()) {
      throw invalid(
          fmt::format("'inputs' feature \"{}\" has {} values and \"{}\" {}: each "
                      "feature needs one per example",
                      name, values.size(), first, examples.size()));
    }
    for (size_t i = 0; i < values.size(); ++i)
      examples[i][name] =
          feature_from_json(values[i], fmt::format("'inputs' feature \"{}\" value {}", name, i));
  }
  return examples;
}

}  // namespace

io::Feature feature_from_json(const Json& value, const std::string& where) {
  io::Feature feature;
  if (value.is_null()) return feature;
  if (!value.is_array()) {
    add_value(value, feature, where);
    return feature;
  }
  for (const Json& item : value) add_value(item, feature, where);
  return feature;
}

ExamplesRequest parse_examples_request(const std::string& body) {
  Json request = request_object(body, "'examples'");
  ExamplesRequest parsed;
  parsed.signature_name = signature_name_of(request);
  if (!request.contains("examples") || !request["examples"].is_array())
    throw invalid(request.contains("examples")
                      ? "'examples' must be a list of objects, one per example"
                      : "the request has no 'examples' (a list of objects of feature values)");
  if (request["examples"].empty()) throw invalid("'examples' is an empty list");
  io::Features context;
  if (request.contains("context")) context = features_of(request["context"], "'context'");
  check_context_copies(context, request["examples"].size());
  for (size_t i = 0; i < request["examples"].size(); ++i) {
    std::string where = fmt::format("example {}", i);
    io::Features example = features_of(request["examples"][i], where);
    // An example's own value of a context feature replaces the context's, as in TensorFlow
    // Serving's merged tf.Examples.
    for (const auto& [name, feature] : context) example.emplace(name, feature);
    parsed.examples.push_back(std::move(example));
  }
  return parsed;
}

std::optional<ExamplesRequest> parse_feature_predict_request(
    const std::string& body, const std::vector<std::string>& features,
    const std::set<std::string>& tensor_inputs) {
  Json request = request_object(body, "'instances' or 'inputs'");
  bool rows = request.contains("instances"), columns = request.contains("inputs");
  if (rows == columns) return std::nullopt;  // the tensor reader words the error
  const Json& given = rows ? request["instances"] : request["inputs"];
  if (rows &&
      (!given.is_array() || given.empty() || names_tensors(given.front(), features, tensor_inputs)))
    return std::nullopt;
  if (columns && names_tensors(given, features, tensor_inputs)) return std::nullopt;
  ExamplesRequest parsed;
  parsed.signature_name = signature_name_of(request);
  parsed.format = rows ? RequestFormat::kRow : RequestFormat::kColumnar;
  if (rows) {
    for (size_t i = 0; i < given.size(); ++i)
      parsed.examples.push_back(features_of(given[i], fmt::format("instance {}", i)));
  } else {
    parsed.examples = columnar_examples(given);
  }
  for (size_t i = 0; i < parsed.examples.size(); ++i)
    check_known(parsed.examples[i], features,
                rows ? fmt::format("instance {}", i) : std::string("'inputs'"));
  return parsed;
}

}  // namespace kiln::serving
