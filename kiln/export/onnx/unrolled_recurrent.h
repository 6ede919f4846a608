#pragma once
// A recurrent layer (aten::lstm, aten::gru) written step by step as Gemm, Split, Sigmoid, Tanh,
// Mul and Add (`kiln export --portable`), for runtimes without ONNX's LSTM and GRU or that read
// them only for a batch of one, as OpenCV 4.6 does. The graph grows with the steps (the
// sequence length is fixed by the signature), and the results are PyTorch's within float
// rounding.

#include <string>
#include <vector>

#include "kiln/export/onnx/onnx_context.h"

namespace kiln::exports::onnx_export {

struct RecurrentLayers {
  bool lstm = true;  // else GRU
  int64_t layers = 1, directions = 1;
  bool biases = true;
  std::vector<at::Tensor> params;  // PyTorch's flat list: w_ih, w_hh[, b_ih, b_hh] per direction
};

struct UnrolledOutputs {
  std::string output;                    // [batch, steps, directions * hidden]
  std::vector<std::string> last_states;  // [batch, hidden] per layer and direction, in order
};

/// The layers over `x`, [batch, steps, features] of `batch_first_shape` (as traced).
UnrolledOutputs write_unrolled(Context& c, const RecurrentLayers& layers, const std::string& x,
                               std::vector<int64_t> batch_first_shape);

}  // namespace kiln::exports::onnx_export
