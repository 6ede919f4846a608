#include "kiln/serving/tensor.h"

namespace kiln::serving {
namespace {

// Each dtype with its model.yaml name and TensorFlow's.
struct DTypeNames {
  DType dtype;
  const char *name, *tf_name;
};
constexpr DTypeNames kDTypeNames[] = {
    {DType::kFloat32, "float32", "DT_FLOAT"}, {DType::kFloat64, "float64", "DT_DOUBLE"},
    {DType::kInt32, "int32", "DT_INT32"},     {DType::kInt64, "int64", "DT_INT64"},
    {DType::kBool, "bool", "DT_BOOL"},        {DType::kString, "string", "DT_STRING"}};

}  // namespace

std::string dtype_name(DType dtype) {
  for (const DTypeNames& names : kDTypeNames)
    if (names.dtype == dtype) return names.name;
  return "?";
}

std::optional<DType> dtype_named(const std::string& name) {
  for (const DTypeNames& names : kDTypeNames)
    if (name == names.name) return names.dtype;
  return std::nullopt;
}

std::string tf_dtype_name(DType dtype) {
  for (const DTypeNames& names : kDTypeNames)
    if (names.dtype == dtype) return names.tf_name;
  return "DT_INVALID";
}

int64_t HostTensor::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace kiln::serving
