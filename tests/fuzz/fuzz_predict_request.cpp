// Predict request bodies as `kiln serve` will read them (TensorFlow Serving's JSON tensors, row
// and columnar, bare NaN/Infinity, base64, {"b64": ...} PNG/JPEG images for an image input,
// decoded by io/image_input.h): any bytes give tensors or a ServingError, never a crash. The first
// byte picks the signature: bit 1 the image input, else bit 0 two inputs or one. What is read must
// also write back (as a columnar response) and read again the same, so the reader and the writer
// agree on every value they let through (text that is not UTF-8 aside). A body the fast reader of
// numbers takes (numeric_request.h) must read the same, to the bit, in the general reader.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/core/text_codec.h"
#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/rest/numeric_request.h"
#include "kiln/serving/serving_error.h"

namespace {

using kiln::serving::DType;
using kiln::serving::HostTensor;
using kiln::serving::TensorSpec;

const std::map<std::string, TensorSpec> kOneInput = {{"x", {DType::kFloat32, {-1, -1}}}};
const std::map<std::string, TensorSpec> kTwoInputs = {{"tag", {DType::kString, {-1}}},
                                                      {"n", {DType::kInt64, {-1, 2}}}};
// 2x3 RGB images, channels first, scaled to [0, 1].
const std::map<std::string, TensorSpec> kImageInput = {
    {"image", {DType::kFloat32, {-1, 3, 2, 3}, kiln::io::ImageInput{3, 2, 3, true, 1.0 / 255}}}};

bool same_value(const HostTensor& tensor, double a, double b) {
  if (tensor.dtype != DType::kFloat32) return a == b;
  return float(a) == float(b) || (std::isnan(a) && std::isnan(b));
}

void check_read_back(const kiln::serving::PredictRequest& request,
                     const std::map<std::string, TensorSpec>& inputs) {
  for (const auto& [name, tensor] : request.inputs) {
    size_t values = tensor.dtype == DType::kString ? tensor.strings.size() : tensor.numbers.size();
    if (tensor.size() < 0 || values != size_t(tensor.size())) std::abort();
  }
  std::string written =
      kiln::serving::predict_response(request.inputs, kiln::serving::RequestFormat::kColumnar);
  written.replace(0, std::string("{\"outputs\"").size(), "{\"inputs\"");
  kiln::serving::PredictRequest again = kiln::serving::parse_predict_request(written, inputs);
  for (const auto& [name, tensor] : request.inputs) {
    const HostTensor& other = again.inputs.at(name);
    if (other.shape != tensor.shape) std::abort();
    // Bytes that are not UTF-8 (from base64) go out as text only in a `_bytes` output; in
    // another they are replaced, as JSON text must be UTF-8.
    for (size_t i = 0; i < tensor.strings.size(); ++i)
      if (kiln::is_valid_utf8(tensor.strings[i]) && other.strings[i] != tensor.strings[i])
        std::abort();
    for (size_t i = 0; i < tensor.numbers.size(); ++i)
      if (!same_value(tensor, tensor.numbers[i], other.numbers[i])) std::abort();
  }
}

// The fast reader's answer, when it gives one, is the general reader's (which must not throw).
void check_fast_reader(const std::string& body, const std::map<std::string, TensorSpec>& inputs) {
  auto inputs_of = [&inputs](const std::string&) -> const std::map<std::string, TensorSpec>& {
    return inputs;
  };
  std::optional<kiln::serving::PredictRequest> fast =
      kiln::serving::parse_numeric_request(body, inputs_of);
  if (!fast) return;
  kiln::serving::PredictRequest full =
      kiln::serving::parse_predict_request_in_full(body, inputs_of);
  if (fast->signature_name != full.signature_name || fast->format != full.format ||
      fast->inputs.size() != full.inputs.size())
    std::abort();
  for (const auto& [name, tensor] : full.inputs) {
    const HostTensor& other = fast->inputs.at(name);
    if (other.dtype != tensor.dtype || other.shape != tensor.shape ||
        other.numbers.size() != tensor.numbers.size() || !other.strings.empty() ||
        std::memcmp(other.numbers.data(), tensor.numbers.data(),
                    tensor.numbers.size() * sizeof(double)) != 0)
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& inputs = data[0] & 2 ? kImageInput : data[0] & 1 ? kTwoInputs : kOneInput;
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_fast_reader(body, inputs);
  kiln::serving::PredictRequest request;
  try {
    request = kiln::serving::parse_predict_request(body, inputs);
  } catch (const kiln::serving::ServingError&) {
    return 0;
  }
  check_read_back(request, inputs);
  return 0;
}
