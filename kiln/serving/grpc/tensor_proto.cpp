#include "kiln/serving/grpc/tensor_proto.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "kiln/io/image_input.h"
#include "kiln/serving/request_limits.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

// Bounds what a shape may claim before anything is allocated: a TensorProto of one float_val and
// dimensions of a billion would otherwise make kiln fill a billion copies of it.
constexpr int64_t kMaxElements = int64_t(1) << 24;
constexpr int kMaxRank = 32;

ServingError invalid(const std::string& message) {
  return ServingError(StatusCode::kInvalidArgument, message);
}

ServingError exhausted(const std::string& message) {
  return ServingError(StatusCode::kResourceExhausted, message);
}

}  // namespace

std::optional<DType> served_dtype(tensorflow::DataType type) {
  switch (type) {
    case tensorflow::DT_FLOAT:
      return DType::kFloat32;
    case tensorflow::DT_DOUBLE:
      return DType::kFloat64;
    case tensorflow::DT_INT32:
      return DType::kInt32;
    case tensorflow::DT_INT64:
      return DType::kInt64;
    case tensorflow::DT_BOOL:
      return DType::kBool;
    case tensorflow::DT_STRING:
      return DType::kString;
    default:
      return std::nullopt;
  }
}

namespace {

std::string tf_type_name(tensorflow::DataType type) {
  const std::string& name = tensorflow::DataType_Name(type);
  return name.empty() ? fmt::format("data type {}", int(type)) : name;
}

DType dtype_of(const tensorflow::TensorProto& proto, const std::string& what) {
  std::optional<DType> dtype = served_dtype(proto.dtype());
  if (!dtype)
    throw invalid(fmt::format(
        "{}: {} is not a dtype kiln serves (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, "
        "DT_STRING)",
        what, tf_type_name(proto.dtype())));
  return *dtype;
}

std::vector<int64_t> shape_of(const tensorflow::TensorProto& proto, const std::string& what) {
  const tensorflow::TensorShapeProto& shape = proto.tensor_shape();
  if (shape.unknown_rank()) throw invalid(what + ": its shape has an unknown rank");
  if (shape.dim_size() > kMaxRank)
    throw invalid(fmt::format("{}: {} dimensions, more than the {} kiln takes", what,
                              shape.dim_size(), kMaxRank));
  std::vector<int64_t> sizes;
  int64_t elements = 1;
  for (const auto& dim : shape.dim()) {
    if (dim.size() < 0)
      throw invalid(fmt::format("{}: dimension {} has size {}", what, sizes.size(), dim.size()));
    sizes.push_back(dim.size());
    if (dim.size() > 0 && elements > kMaxElements / dim.size())
      throw invalid(fmt::format("{}: shape [{}...] holds more than {} elements, kiln's limit", what,
                                fmt::join(sizes, ", "), kMaxElements));
    elements *= dim.size();
  }
  return sizes;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

// A repeated field's values for `count` elements: all of them, the last one repeated, or zeros
// when none is given (TensorFlow's Tensor::FromProto).
template <typename Values, typename Out>
void fill_repeated(const Values& values, int64_t count, std::vector<Out>& out,
                   const std::string& what) {
  if (values.size() > count)
    throw invalid(
        fmt::format("{}: {} values for a shape of {} elements", what, values.size(), count));
  if constexpr (std::is_same_v<Out, std::string>) {  // bounded before any string is copied
    size_t bytes = 0;
    for (const auto& value : values) bytes += value.size();
    if (!values.empty()) bytes += size_t(count - values.size()) * values[values.size() - 1].size();
    if (bytes > kMaxRequestCopyBytes)
      throw exhausted(fmt::format(
          "{}: its strings, the last one repeated to fill shape's {} elements, would be {} "
          "bytes; a request's tensor is expanded to {} at most",
          what, count, bytes, kMaxRequestCopyBytes));
  }
  out.reserve(count);
  for (const auto& value : values) out.push_back(Out(value));
  Out last = values.empty() ? Out() : out.back();
  out.resize(count, last);
}

template <typename T>
void read_little_endian(const std::string& bytes, int64_t count, std::vector<double>& out) {
  out.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(value);
  }
}

size_t item_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
    default:
      return 1;
  }
}

void read_content(const std::string& bytes, HostTensor& tensor, int64_t count,
                  const std::string& what) {
  if (tensor.dtype == DType::kString)
    throw invalid(what + ": a DT_STRING tensor gives its values in string_val, not tensor_content");
  size_t size = item_size(tensor.dtype);
  if (bytes.size() != size * size_t(count))
    throw invalid(fmt::format("{}: tensor_content has {} bytes; shape [{}] of {} needs {}", what,
                              bytes.size(), fmt::join(tensor.shape, ", "),
                              tf_dtype_name(tensor.dtype), size * size_t(count)));
  switch (tensor.dtype) {
    case DType::kFloat32:
      return read_little_endian<float>(bytes, count, tensor.numbers);
    case DType::kFloat64:
      return read_little_endian<double>(bytes, count, tensor.numbers);
    case DType::kInt32:
      return read_little_endian<int32_t>(bytes, count, tensor.numbers);
    case DType::kInt64:
      return read_little_endian<int64_t>(bytes, count, tensor.numbers);
    default:  // bool: a byte each
      read_little_endian<uint8_t>(bytes, count, tensor.numbers);
      for (double& value : tensor.numbers) value = value != 0;  // any byte but 0 is true
  }
}

void read_values(const tensorflow::TensorProto& proto, HostTensor& tensor,
                 const std::string& what) {
  int64_t count = element_count(tensor.shape);
  if (!proto.tensor_content().empty())
    return read_content(proto.tensor_content(), tensor, count, what);
  switch (tensor.dtype) {
    case DType::kFloat32:
      return fill_repeated(proto.float_val(), count, tensor.numbers, what);
    case DType::kFloat64:
      return fill_repeated(proto.double_val(), count, tensor.numbers, what);
    case DType::kInt32:
      return fill_repeated(proto.int_val(), count, tensor.numbers, what);
    case DType::kInt64:
      return fill_repeated(proto.int64_val(), count, tensor.numbers, what);
    case DType::kBool:
      return fill_repeated(proto.bool_val(), count, tensor.numbers, what);
    case DType::kString:
      return fill_repeated(proto.string_val(), count, tensor.strings, what);
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void check_rows(const std::vector<int64_t>& shape, int64_t max_rows, const std::string& what) {
  if (!shape.empty()) check_request_rows(what, shape.front(), max_rows);
}

void check_shape(const std::vector<int64_t>& shape, const TensorSpec& spec, int64_t max_rows,
                 const std::string& what) {
  bool fits = shape.size() == spec.shape.size();
  for (size_t i = 0; fits && i < shape.size(); ++i)
    fits = spec.shape[i] < 0 || spec.shape[i] == shape[i];
  if (!fits)
    throw invalid(fmt::format("{}: shape {} does not fit the signature's {} (-1: any size)", what,
                              shape_text(shape), shape_text(spec.shape)));
  check_rows(shape, max_rows, what);
}

// An image input given as one encoded image per example (DT_STRING of shape [n]).
HostTensor decode_images(const tensorflow::TensorProto& proto, const std::string& input,
                         const TensorSpec& spec, int64_t max_rows) {
  std::string what = fmt::format("input '{}'", input);
  std::vector<int64_t> shape = shape_of(proto, what);
  if (shape.size() != 1)
    throw invalid(
        fmt::format("{}: encoded images come as a DT_STRING tensor of shape [examples], "
                    "not {}",
                    what, shape_text(shape)));
  check_rows(shape, max_rows, what);
  HostTensor bytes{DType::kString, shape, {}, {}};
  read_values(proto, bytes, what);
  HostTensor tensor{spec.dtype, {shape[0]}, {}, {}};
  for (int64_t size : spec.image->shape()) tensor.shape.push_back(size);
  for (size_t i = 0; i < bytes.strings.size(); ++i) {
    std::vector<double> values = io::image_input_values(
        bytes.strings[i], *spec.image, fmt::format("input '{}' image {}", input, i));
    tensor.numbers.insert(tensor.numbers.end(), values.begin(), values.end());
  }
  check_shape(tensor.shape, spec, max_rows, what);
  return tensor;
}

}  // namespace

tensorflow::DataType tf_data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return tensorflow::DT_FLOAT;
    case DType::kFloat64:
      return tensorflow::DT_DOUBLE;
    case DType::kInt32:
      return tensorflow::DT_INT32;
    case DType::kInt64:
      return tensorflow::DT_INT64;
    case DType::kBool:
      return tensorflow::DT_BOOL;
    case DType::kString:
      return tensorflow::DT_STRING;
  }
  return tensorflow::DT_INVALID;
}

HostTensor tensor_from_proto(const tensorflow::TensorProto& proto, const std::string& input,
                             const TensorSpec& spec, int64_t max_rows) {
  std::string what = fmt::format("input '{}'", input);
  DType dtype = dtype_of(proto, what);
  if (spec.image && dtype == DType::kString && spec.dtype != DType::kString)
    return decode_images(proto, input, spec, max_rows);
  if (dtype != spec.dtype)
    throw invalid(fmt::format("{}: expects {} but {} was given", what, tf_dtype_name(spec.dtype),
                              tf_dtype_name(dtype)));
  HostTensor tensor{dtype, shape_of(proto, what), {}, {}};
  check_shape(tensor.shape, spec, max_rows, what);
  read_values(proto, tensor, what);
  return tensor;
}

int64_t claimed_values(const tensorflow::TensorProto& proto, const std::string& what) {
  return element_count(shape_of(proto, what));
}

void claim_values(int64_t& claimed, int64_t values, const std::string& what) {
  claimed += values;
  if (claimed > kMaxRequestValues)
    throw exhausted(fmt::format(
        "{}: the request's tensors claim {} values or more once expanded; one request may "
        "make the server hold {} at most",
        what, claimed, kMaxRequestValues));
}

HostTensor tensor_from_answer(const tensorflow::TensorProto& proto, const std::string& what) {
  HostTensor tensor{dtype_of(proto, what), shape_of(proto, what), {}, {}};
  read_values(proto, tensor, what);
  return tensor;
}

void tensor_to_proto(const HostTensor& tensor, tensorflow::TensorProto& proto) {
  proto.set_dtype(tf_data_type(tensor.dtype));
  for (int64_t size : tensor.shape) proto.mutable_tensor_shape()->add_dim()->set_size(size);
  const std::vector<double>& numbers = tensor.numbers;
  switch (tensor.dtype) {
    case DType::kFloat32:
      for (double value : numbers) proto.add_float_val(static_cast<float>(value));
      break;
    case DType::kFloat64:
      proto.mutable_double_val()->Add(numbers.begin(), numbers.end());
      break;
    case DType::kInt32:
      for (double value : numbers) proto.add_int_val(static_cast<int32_t>(value));
      break;
    case DType::kInt64:
      for (double value : numbers) proto.add_int64_val(static_cast<int64_t>(value));
      break;
    case DType::kBool:
      for (double value : numbers) proto.add_bool_val(value != 0);
      break;
    case DType::kString:
      for (const std::string& value : tensor.strings) proto.add_string_val(value);
      break;
  }
}

}  // namespace kiln::serving
