#pragma once
// `kiln export --format onnx`: a version's serving signature as model.onnx. The signature is
// traced through LibTorch's tracer from the raw input (as a client sends it) through the eval
// transforms, the model and the signature's own outputs (probabilities, class ids), at two batch
// sizes, so that what depends on the batch stays a dynamic dimension; each aten operator of the
// trace becomes ONNX operators (export/onnx/ops_*.cpp, opset 13). An operator kiln cannot write
// is refused with the layer it belongs to.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::exports {

class ExportedModel;

struct OnnxModel {
  std::string bytes;                 // a serialized ONNX ModelProto: model.onnx
  int64_t nodes = 0;                 // its operators
  std::vector<std::string> outputs;  // its outputs, in order
};

/// `model`'s signature `signature` as ONNX. Throws an Error naming the layer that cannot be
/// written.
/// `portable`: written with the operators that runtimes reading few read (WriteOptions).
OnnxModel to_onnx(ExportedModel& model, const std::string& signature, bool portable = false);

}  // namespace kiln::exports
