#pragma once
// Element types by the names numpy and configs use (`float32`, `uint8`, ...): the cast
// transform, the dtypes of tf.Example features and the dtypes a run saves in inputs.json.
// Thread-safety: functions of their arguments.

#include <torch/torch.h>

#include <optional>
#include <string>

namespace kiln::data {

/// `float32`, `int64`, ...; LibTorch's own name for a type without a numpy name.
std::string dtype_name(torch::Dtype dtype);
/// The type a name gives, or nothing for an unknown name.
std::optional<torch::Dtype> dtype_named(const std::string& name);

}  // namespace kiln::data
