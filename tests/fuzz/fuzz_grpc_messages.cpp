// Messages of TensorFlow Serving's gRPC API as `kiln serve --grpc-port` reads them
// (serving/grpc/grpc_messages.h, tensor_proto.h, raw_predict.h): the first byte picks the message
// (Predict against a signature of numbers and strings or of an image input, or of raw features by
// name, Classify's examples, GetModelMetadata,
// a ModelSpec), the rest is its protobuf bytes. Any bytes give what the server runs or a
// ServingError, never a crash; inputs read must hold as many values as their shape, and write back
// (as an answer's TensorProto) and read again the same.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/serving/grpc/grpc_messages.h"
#include "kiln/serving/grpc/raw_predict.h"
#include "kiln/serving/grpc/tensor_proto.h"
#include "kiln/serving/serving_error.h"

namespace {

using kiln::serving::DType;
using kiln::serving::HostTensor;
using kiln::serving::Signature;
using kiln::serving::TensorSpec;

Signature tensors_signature() {
  Signature signature;
  signature.inputs["x"] = TensorSpec(DType::kFloat32, {-1, 2});
  signature.inputs["tag"] = TensorSpec(DType::kString, {-1});
  signature.outputs["y"] = {TensorSpec(DType::kFloat32, {-1, 1}), "", {}, ""};
  return signature;
}

Signature image_signature() {
  Signature signature;  // 2x3 RGB images, channels first, scaled to [0, 1]
  signature.inputs["image"] =
      TensorSpec(DType::kFloat32, {-1, 3, 2, 3}, kiln::io::ImageInput{3, 2, 3, true, 1.0 / 255});
  signature.outputs["y"] = {TensorSpec(DType::kFloat32, {-1, 1}), "", {}, ""};
  return signature;
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void check_written_back(const kiln::serving::HostTensors& inputs) {
  for (const auto& [name, tensor] : inputs) {
    size_t values = tensor.dtype == DType::kString ? tensor.strings.size() : tensor.numbers.size();
    if (tensor.size() < 0 || values != size_t(tensor.size())) std::abort();
    tensorflow::TensorProto proto;
    kiln::serving::tensor_to_proto(tensor, proto);
    HostTensor again = kiln::serving::tensor_from_answer(proto, name);
    if (again.shape != tensor.shape || again.strings != tensor.strings) std::abort();
    for (size_t i = 0; i < tensor.numbers.size(); ++i)
      if (!same(float(again.numbers[i]), float(tensor.numbers[i]))) std::abort();
  }
}

void read_predict(const std::string& bytes, const Signature& signature) {
  kiln::serving::tfs::PredictRequest request;
  if (!request.ParseFromString(bytes)) return;
  check_written_back(kiln::serving::predict_inputs(request, signature, 64));
  kiln::serving::predict_outputs(request, signature);
  kiln::serving::route_of(request.has_model_spec() ? &request.model_spec() : nullptr,
                          kiln::serving::RouteKind::kPredict);
}

// Predict of raw features by name (raw_predict.h), for a model whose columns read these.
void read_raw_predict(const std::string& bytes) {
  kiln::serving::tfs::PredictRequest request;
  if (!request.ParseFromString(bytes)) return;
  // "fare" one value per example, "grid" two, the others unknown to the export.
  static const std::map<std::string, kiln::serving::TensorSpec> raw_inputs = {
      {"fare", {kiln::serving::DType::kFloat32, {-1}}},
      {"grid", {kiln::serving::DType::kInt64, {-1, 2}}}};
  auto examples = kiln::serving::raw_predict_examples(
      request, tensors_signature(), {"fare", "company", "grid", "x"}, raw_inputs, 64);
  if (!examples) return;
  if (examples->empty() || examples->size() > 64) std::abort();
  for (const auto& example : *examples)  // every input sent, as many values in each example
    for (const auto& [name, feature] : example)
      if (feature.size() != examples->front().at(name).size()) std::abort();
}

void read_examples(const std::string& bytes) {
  kiln::serving::tfs::ClassificationRequest request;
  if (!request.ParseFromString(bytes)) return;
  for (const auto& example : kiln::serving::examples_of(request.input(), 64))
    for (const auto& [name, feature] : example)  // one kind of values each
      if (feature.size() != feature.bytes.size() + feature.floats.size() + feature.ints.size())
        std::abort();
}

void read_metadata(const std::string& bytes) {
  kiln::serving::tfs::GetModelMetadataRequest request;
  if (!request.ParseFromString(bytes)) return;
  kiln::serving::tfs::GetModelMetadataResponse response;
  kiln::serving::fill_metadata(request, kiln::serving::answered_spec("m", 1, ""),
                               {{"serving_default", tensors_signature()}}, response);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0:
        if (data[0] & 8)
          read_raw_predict(bytes);
        else
          read_predict(bytes, data[0] & 4 ? image_signature() : tensors_signature());
        break;
      case 1:
        read_examples(bytes);
        break;
      case 2:
        read_metadata(bytes);
        break;
      default: {
        kiln::serving::tfs::ModelSpec spec;
        if (spec.ParseFromString(bytes))
          kiln::serving::route_of(&spec, kiln::serving::RouteKind::kStatus);
      }
    }
  } catch (const kiln::serving::ServingError&) {
  } catch (const kiln::DataError&) {  // an image input's bytes that are no image
  }
  return 0;
}
