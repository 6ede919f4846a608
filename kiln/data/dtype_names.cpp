#include "kiln/data/dtype_names.h"

#include <utility>
#include <vector>

namespace kiln::data {
namespace {

const std::vector<std::pair<torch::Dtype, const char*>>& dtype_names() {
  static const std::vector<std::pair<torch::Dtype, const char*>> names = {
      {torch::kFloat32, "float32"},   {torch::kFloat64, "float64"}, {torch::kFloat16, "float16"},
      {torch::kBFloat16, "bfloat16"}, {torch::kUInt8, "uint8"},     {torch::kInt8, "int8"},
      {torch::kInt16, "int16"},       {torch::kInt32, "int32"},     {torch::kInt64, "int64"},
      {torch::kBool, "bool"}};
  return names;
}

}  // namespace

std::string dtype_name(torch::Dtype dtype) {
  for (const auto& [type, name] : dtype_names())
    if (type == dtype) return name;
  return std::string(c10::toString(dtype));
}

std::optional<torch::Dtype> dtype_named(const std::string& name) {
  for (const auto& [type, known] : dtype_names())
    if (name == known) return type;
  return std::nullopt;
}

}  // namespace kiln::data
