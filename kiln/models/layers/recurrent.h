#pragma once
// What lstm and gru share: options, and a module running torch's fused recurrent kernels over
// batch-first [steps, features] sequences with the parameters named as torch.nn.LSTM/GRU names
// them (weight_ih_l0, bias_hh_l1_reverse, ...), so state dicts exchange with PyTorch code.

#include "kiln/models/layer.h"

namespace kiln::models {

struct RecurrentOptions {
  int64_t hidden = 1;
  int64_t layers = 1;
  bool bidirectional = false;
  double dropout = 0.0;
  std::string output = "last";
  void describe(Schema& s);
};

enum class RecurrentCell { kLstm, kGru };

/// The module for [steps, features] inputs: [hidden * directions] when `output: last` (each
/// direction's final state of the top layer), [steps, hidden * directions] for `sequence`.
BuiltLayer build_recurrent(const Shape& input, const RecurrentOptions& options, RecurrentCell cell);

}  // namespace kiln::models
