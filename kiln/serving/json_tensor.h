#pragma once
// TensorFlow Serving's JSON tensors (docs/formats.md §4; api_rest.md): predict
// requests in row form (`"instances"`: one entry per example, all inputs sharing the first
// dimension) or columnar form (`"inputs"`: each input a whole tensor), read into host tensors
// checked against a signature's inputs; and responses (`"predictions"` for a row request,
// `"outputs"` for a columnar one) written back with TensorFlow Serving's number formatting. Bare
// NaN, Infinity and -Infinity are read and written, as TensorFlow Serving does. Binary strings
// travel as {"b64": "..."}. Torch-free: the server turns these into tensors.
// Thread-safety: pure functions.

#include <cstdint>
#include <functional>
#include <map>
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

enum class RequestFormat { kRow, kColumnar };

struct PredictRequest {
  std::string signature_name = "serving_default";
  RequestFormat format = RequestFormat::kRow;
  std::map<std::string, HostTensor> inputs;
};

/// Reads a :predict body for a signature taking `inputs`. Throws ServingError
/// (kInvalidArgument) saying what is wrong and where: not JSON, both or neither of
/// instances/inputs, an unknown or missing input, a ragged list, a value of the wrong type, a
/// shape the signature does not take, bad base64.
PredictRequest parse_predict_request(const std::string& body,
                                     const std::map<std::string, TensorSpec>& inputs);
/// The same for a model of several signatures: `inputs_of` gives the inputs of the signature the
/// body names (it throws ServingError for one the model lacks).
using SignatureInputs =
    std::function<const std::map<std::string, TensorSpec>&(const std::string& signature_name)>;
PredictRequest parse_predict_request(const std::string& body, const SignatureInputs& inputs_of);
/// The same without the fast path for bodies of numbers only (numeric_request.h): the reader of
/// every body, and the reference the fast path is tested against.
PredictRequest parse_predict_request_in_full(const std::string& body,
                                             const SignatureInputs& inputs_of);

/// The response body for `outputs` (each with the batch dimension first in row form): one
/// output is written without its name, several as objects, as TensorFlow Serving does.
std::string predict_response(const std::map<std::string, HostTensor>& outputs,
                             RequestFormat format);

/// Each example's outputs as one JSON object (the entries of a row-form response's
/// "predictions", named even when there is one output): what `kiln predict` writes per line.
std::vector<std::string> prediction_rows(const std::map<std::string, HostTensor>& outputs);

/// A float as TensorFlow Serving writes it: 6 significant digits when they read back as the
/// same value, else all it takes; ".0" after a whole number; NaN, Infinity, -Infinity.
std::string format_float(double value, bool single_precision);

}  // namespace kiln::serving
