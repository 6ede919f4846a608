#include "kiln/serving/rest/json_tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"
#include "kiln/io/image_input.h"
#include "kiln/serving/rest/numeric_request.h"
#include "kiln/serving/rest/request_json.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

bool is_base64_object(const Json& value) {
  return value.is_object() && value.size() == 1 && value.contains("b64") &&
         value.at("b64").is_string();
}

std::string type_error(const Json& value, DType dtype, const std::string& input) {
  return fmt::format("input '{}': the value {} is not of its type, {}", input, quoted_value(value),
                     dtype_name(dtype));
}

double float_value(const Json& value, DType dtype, const std::string& input) {
  double number = 0;
  if (non_finite_number(value, number)) return number;
  if (!value.is_number()) throw invalid(type_error(value, dtype, input));
  number = value.get<double>();
  // As TensorFlow Serving: an integer the float cannot hold exactly, or a number beyond its
  // range, is an error, not a silent rounding.
  bool single = dtype == DType::kFloat32;
  double exact = single ? double(1 << 24) : 9007199254740992.0;
  double largest =
      single ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  if ((value.is_number_integer() && std::abs(number) > exact) || std::abs(number) > largest)
    throw invalid(fmt::format("input '{}': {} cannot be a {} without losing precision", input,
                              quoted_value(value), dtype_name(dtype)));
  return number;
}

void add_leaf(const Json& value, HostTensor& tensor, const std::string& input) {
  switch (tensor.dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
      tensor.numbers.push_back(float_value(value, tensor.dtype, input));
      return;
    case DType::kInt32:
    case DType::kInt64: {
      bool fits = value.is_number_integer() &&
                  (tensor.dtype == DType::kInt64 ||
                   (value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                    value.get<int64_t>() <= std::numeric_limits<int32_t>::max()));
      if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)) fits = false;
      if (!fits) throw invalid(type_error(value, tensor.dtype, input));
      tensor.numbers.push_back(double(value.get<int64_t>()));
      return;
    }
    case DType::kBool:
      if (!value.is_boolean()) throw invalid(type_error(value, tensor.dtype, input));
      tensor.numbers.push_back(value.get<bool>() ? 1 : 0);
      return;
    case DType::kString:
      if (is_base64_object(value)) {
        auto bytes = base64_decode(value.at("b64").get_ref<const std::string&>());
        if (!bytes)
          throw invalid(
              fmt::format("input '{}': {} is not valid base64", input, quoted_value(value)));
        tensor.strings.push_back(std::move(*bytes));
      } else if (value.is_string()) {
        tensor.strings.push_back(value.get<std::string>());
      } else {
        throw invalid(type_error(value, tensor.dtype, input));
      }
      return;
  }
}

// The shape a nesting of lists describes, read down its first elements.
std::vector<int64_t> nested_shape(const Json& value) {
  std::vector<int64_t> shape;
  const Json* at = &value;
  while (at->is_array()) {
    shape.push_back(int64_t(at->size()));
    if (at->empty()) break;
    at = &(*at)[0];
  }
  return shape;
}

// An encoded image in place of an image input's numbers: decoded as the training data decoded it.
// `first` is the index of the tensor's first image among the request's (a row-form instance's).
void add_image(const Json& value, const io::ImageInput& image, int64_t first, HostTensor& tensor,
               const std::string& input) {
  int64_t index =
      first + int64_t(tensor.numbers.size()) / (image.channels * image.height * image.width);
  if (!is_base64_object(value))
    throw invalid(
        fmt::format("input '{}': the value {} is not an image ({{\"b64\": ...}}) as "
                    "the first one is",
                    input, quoted_value(value)));
  auto bytes = base64_decode(value.at("b64").get_ref<const std::string&>());
  if (!bytes) throw invalid(fmt::format("input '{}': image {} is not valid base64", input, index));
  try {
    std::vector<double> values =
        io::image_input_values(*bytes, image, fmt::format("input '{}' image {}", input, index));
    tensor.numbers.insert(tensor.numbers.end(), values.begin(), values.end());
  } catch (const DataError& e) {
    throw invalid(e.what());
  }
}

void fill(const Json& value, size_t level, const std::vector<int64_t>& shape, HostTensor& tensor,
          const std::string& input, const io::ImageInput* image, int64_t first_image) {
  if (!value.is_array()) {
    if (level != shape.size())
      throw invalid(
          fmt::format("input '{}': the value {} is {} lists deep, the others {}: lists "
                      "of different depths",
                      input, quoted_value(value), level, shape.size()));
    if (image)
      add_image(value, *image, first_image, tensor, input);
    else
      add_leaf(value, tensor, input);
    return;
  }
  if (level >= shape.size())
    throw invalid(
        fmt::format("input '{}': a list {} deep where the first values are {} deep: "
                    "lists of different depths",
                    input, level + 1, shape.size()));
  if (int64_t(value.size()) != shape[level])
    throw invalid(
        fmt::format("input '{}': a list of {} at depth {} where the first has {}: a "
                    "tensor's lists must all be as long (its shape is {})",
                    input, value.size(), level + 1, shape[level], shape_text(shape)));
  for (const auto& element : value)
    fill(element, level + 1, shape, tensor, input, image, first_image);
}

const Json& first_leaf(const Json& value) {
  const Json* at = &value;
  while (at->is_array() && !at->empty()) at = &(*at)[0];
  return *at;
}

// The tensor a value describes: nested lists of numbers or strings, or, for an image input, nested
// lists of {"b64": ...} images, each of which adds the image's dimensions.
HostTensor tensor_of(const Json& value, const TensorSpec& spec, const std::string& input,
                     int64_t first_image = 0) {
  HostTensor tensor;
  tensor.dtype = spec.dtype;
  tensor.shape = nested_shape(value);
  const io::ImageInput* image =
      spec.image && is_base64_object(first_leaf(value)) ? &*spec.image : nullptr;
  fill(value, 0, tensor.shape, tensor, input, image, first_image);
  if (image) {
    std::vector<int64_t> pixels = image->shape();
    tensor.shape.insert(tensor.shape.end(), pixels.begin(), pixels.end());
  }
  return tensor;
}

void check_shape(const HostTensor& tensor, const TensorSpec& spec, const std::string& input) {
  bool fits = tensor.shape.size() == spec.shape.size();
  for (size_t i = 0; fits && i < spec.shape.size(); ++i)
    fits = spec.shape[i] < 0 || spec.shape[i] == tensor.shape[i];
  if (!fits)
    throw invalid(fmt::format("input '{}' has shape {}; the signature takes {} (-1: any size)",
                              input, shape_text(tensor.shape), shape_text(spec.shape)));
}

std::string input_names(const std::map<std::string, TensorSpec>& inputs) {
  std::vector<std::string> names;
  for (const auto& [name, spec] : inputs) names.push_back("'" + name + "'");
  return fmt::format("{}", fmt::join(names, ", "));
}

bool is_named(const Json& value) {
  return value.is_object() && !is_base64_object(value) && !non_finite_token(value);
}

const std::string& only_input(const std::map<std::string, TensorSpec>& inputs) {
  if (inputs.size() != 1)
    throw invalid(
        fmt::format("the signature takes {} inputs ({}): name each one, as an object "
                    "of name to value",
                    inputs.size(), input_names(inputs)));
  return inputs.begin()->first;
}

void check_names(const Json& named, const std::map<std::string, TensorSpec>& inputs,
                 const std::string& where) {
  for (const auto& [name, value] : named.items())
    if (name == "b64" && named.size() == 1 && !inputs.count(name))  // {"b64": 5}
      throw invalid(fmt::format("{} is {{\"b64\": {}}}: base64 text is a string", where,
                                quoted_value(value)));
    else if (!inputs.count(name))
      throw invalid(
          fmt::format("{} names input '{}', which the signature does not have; it "
                      "takes {}",
                      where, name, input_names(inputs)));
  for (const auto& [name, spec] : inputs)
    if (!named.contains(name))
      throw invalid(fmt::format("{} lacks input '{}'; the signature takes {}", where, name,
                                input_names(inputs)));
}

// Row form: instance i of every input stacked along a new first dimension.
std::map<std::string, HostTensor> read_instances(const Json& instances,
                                                 const std::map<std::string, TensorSpec>& inputs) {
  if (!instances.is_array())
    throw invalid(fmt::format("'instances' must be a list, one entry per example; got {}",
                              quoted_value(instances)));
  if (instances.empty()) throw invalid("'instances' is an empty list: nothing to predict");
  bool named = is_named(instances[0]);
  std::vector<std::string> names;
  if (named)
    for (const auto& [name, spec] : inputs) names.push_back(name);
  else
    names.push_back(only_input(inputs));
  for (size_t i = 0; i < instances.size(); ++i) {
    if (is_named(instances[i]) != named)
      throw invalid(
          fmt::format("instance {} {} an object of named inputs and instance 0 {}: "
                      "all instances must have one form",
                      i, named ? "is not" : "is", named ? "is" : "is not"));
    if (named) check_names(instances[i], inputs, fmt::format("instance {}", i));
  }
  std::map<std::string, HostTensor> tensors;
  for (const std::string& name : names) {
    HostTensor& tensor = tensors[name];
    tensor.dtype = inputs.at(name).dtype;
    for (size_t i = 0; i < instances.size(); ++i) {
      const Json& value = named ? instances[i].at(name) : instances[i];
      HostTensor one = tensor_of(value, inputs.at(name), name, int64_t(i));
      if (i == 0) tensor.shape = one.shape;
      if (one.shape != tensor.shape)
        throw invalid(
            fmt::format("input '{}' has shape {} in instance {} but {} in instance 0: "
                        "every instance must have the same shape",
                        name, shape_text(one.shape), i, shape_text(tensor.shape)));
      tensor.numbers.insert(tensor.numbers.end(), one.numbers.begin(), one.numbers.end());
      for (auto& s : one.strings) tensor.strings.push_back(std::move(s));
    }
    tensor.shape.insert(tensor.shape.begin(), int64_t(instances.size()));
  }
  return tensors;
}

std::map<std::string, HostTensor> read_inputs(const Json& value,
                                              const std::map<std::string, TensorSpec>& inputs) {
  std::map<std::string, HostTensor> tensors;
  if (!is_named(value)) {
    const std::string& name = only_input(inputs);
    tensors[name] = tensor_of(value, inputs.at(name), name);
    return tensors;
  }
  check_names(value, inputs, "'inputs'");
  for (const auto& [name, spec] : inputs) tensors[name] = tensor_of(value.at(name), spec, name);
  return tensors;
}

// Writes element `offset` on of `tensor` from dimension `level` as nested lists.
void write_values(const HostTensor& tensor, const std::string& name, size_t level, int64_t& offset,
                  std::string& out) {
  if (level == tensor.shape.size()) {
    if (tensor.dtype == DType::kString) {
      const std::string& bytes = tensor.strings[size_t(offset++)];
      bool binary = name.size() >= 6 && name.compare(name.size() - 6, 6, "_bytes") == 0;
      out += binary ? Json{{"b64", base64_encode(bytes)}}.dump()
                    : Json(bytes).dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    }
    double value = tensor.numbers[size_t(offset++)];
    if (tensor.dtype == DType::kBool)
      out += value != 0 ? "true" : "false";
    else if (tensor.dtype == DType::kInt32 || tensor.dtype == DType::kInt64)
      out += std::to_string(int64_t(value));
    else
      out += format_float(value, tensor.dtype == DType::kFloat32);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < tensor.shape[level]; ++i) {
    if (i) out += ',';
    write_values(tensor, name, level + 1, offset, out);
  }
  out += ']';
}

std::string json_key(const std::string& name) {
  return Json(name).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

PredictRequest parse_predict_request(const std::string& body,
                                     const std::map<std::string, TensorSpec>& inputs) {
  return parse_predict_request(
      body,
      [&inputs](const std::string&) -> const std::map<std::string, TensorSpec>& { return inputs; });
}

PredictRequest parse_predict_request(const std::string& body, const SignatureInputs& inputs_of) {
  if (std::optional<PredictRequest> numeric = parse_numeric_request(body, inputs_of))
    return std::move(*numeric);
  return parse_predict_request_in_full(body, inputs_of);
}

PredictRequest parse_predict_request_in_full(const std::string& body,
                                             const SignatureInputs& inputs_of) {
  Json request = parse_request_json(body);
  if (!request.is_object())
    throw invalid(
        fmt::format("the request body must be a JSON object with 'instances' or "
                    "'inputs'; got {}",
                    quoted_value(request)));
  PredictRequest parsed;
  if (request.contains("signature_name")) {
    if (!request["signature_name"].is_string())
      throw invalid("'signature_name' key must be a string value");
    parsed.signature_name = request["signature_name"].get<std::string>();
  }
  bool rows = request.contains("instances"), columns = request.contains("inputs");
  if (rows == columns)
    throw invalid(rows ? "the request has both 'instances' and 'inputs'; give one of them"
                       : "the request has neither 'instances' (row form) nor 'inputs' "
                         "(columnar form)");
  parsed.format = rows ? RequestFormat::kRow : RequestFormat::kColumnar;
  const std::map<std::string, TensorSpec>& inputs = inputs_of(parsed.signature_name);
  parsed.inputs =
      rows ? read_instances(request["instances"], inputs) : read_inputs(request["inputs"], inputs);
  for (const auto& [name, tensor] : parsed.inputs) check_shape(tensor, inputs.at(name), name);
  return parsed;
}

std::string format_float(double value, bool single_precision) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  std::string text = fmt::format("{:g}", value);
  double back = std::strtod(text.c_str(), nullptr);
  bool same = single_precision ? float(back) == float(value) : back == value;
  if (!same)
    text = single_precision ? fmt::format("{:.9g}", float(value)) : fmt::format("{:.17g}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string predict_response(const std::map<std::string, HostTensor>& outputs,
                             RequestFormat format) {
  std::string out = format == RequestFormat::kRow ? "{\"predictions\":" : "{\"outputs\":";
  if (outputs.size() == 1) {
    int64_t offset = 0;
    write_values(outputs.begin()->second, outputs.begin()->first, 0, offset, out);
  } else if (format == RequestFormat::kColumnar) {
    out += '{';
    bool first = true;
    for (const auto& [name, tensor] : outputs) {
      out += (first ? "" : ",") + json_key(name) + ':';
      int64_t offset = 0;
      write_values(tensor, name, 0, offset, out);
      first = false;
    }
    out += '}';
  } else {
    // One object per example: each output's slice along the first dimension.
    out += '[';
    bool first = true;
    for (const std::string& row : prediction_rows(outputs)) {
      out += (first ? "" : ",") + row;
      first = false;
    }
    out += ']';
  }
  return out + "}\n";
}

std::vector<std::string> prediction_rows(const std::map<std::string, HostTensor>& outputs) {
  std::vector<std::string> rows;
  int64_t count = outputs.begin()->second.shape.empty() ? 1 : outputs.begin()->second.shape[0];
  for (int64_t row = 0; row < count; ++row) {
    std::string out = "{";
    bool first = true;
    for (const auto& [name, tensor] : outputs) {
      out += (first ? "" : ",") + json_key(name) + ':';
      int64_t offset = row * (tensor.size() / std::max<int64_t>(1, tensor.shape.at(0)));
      write_values(tensor, name, 1, offset, out);
      first = false;
    }
    rows.push_back(out + "}");
  }
  return rows;
}

}  // namespace kiln::serving
