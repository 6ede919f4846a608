#pragma once
// The tensors of the serving API, whatever the protocol carries them: a dtype with its names in
// model.yaml and TensorFlow, a signature's input or output (TensorSpec), and values held in host
// memory (HostTensor). The REST front end reads them from JSON (json_tensor.h), the gRPC one
// from TensorProto (grpc/tensor_proto.h); the server turns them into the model's tensors.
// Torch-free. Thread-safety: values and pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/io/image_input.h"

namespace kiln::serving {

enum class DType { kFloat32, kFloat64, kInt32, kInt64, kBool, kString };

/// "float32", "int64", ... (the names of model.yaml), and TensorFlow's "DT_FLOAT", ... .
std::string dtype_name(DType dtype);
std::string tf_dtype_name(DType dtype);
/// The dtype a model.yaml name gives; none for a name that is not one of them.
std::optional<DType> dtype_named(const std::string& name);

/// A named input or output of a signature: its dtype and shape, -1 for a size that varies
/// (the batch dimension first).
/// An image input (`image` set) also takes encoded images, {"b64": ...} in place of each example's
/// numbers, decoded as its training data decoded them (io/image_input.h).
struct TensorSpec {
  TensorSpec() = default;
  TensorSpec(DType dtype, std::vector<int64_t> shape, std::optional<io::ImageInput> image = {})
      : dtype(dtype), shape(std::move(shape)), image(std::move(image)) {}

  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::optional<io::ImageInput> image;
};

/// Values in row-major order: numbers (float, int and bool dtypes) or strings.
struct HostTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<double> numbers;
  std::vector<std::string> strings;
  int64_t size() const;
};

}  // namespace kiln::serving
