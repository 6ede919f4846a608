#pragma once
// What lstm and gru share: options, and a module running torch's fused recurrent kernels over
// batch-first [steps, features] sequences with the parameters named as torch.nn.LSTM/GRU names
// them (weight_ih_l0, bias_hh_l1_reverse, ...), so state dicts exchange with PyTorch code.

#include "kiln/models/layer.h"

namespace kiln::models {

/// The recurrent layer; each name is its layer type (rnn_classifier's `cell` chooses by it).
enum class RecurrentCell { kLstm, kGru };
inline EnumNameList<RecurrentCell> enum_names(RecurrentCell) {
  return {{RecurrentCell::kLstm, "lstm"}, {RecurrentCell::kGru, "gru"}};
}
/// The final state of the top layer, or its output at every step.
enum class RecurrentOutput { kLast, kSequence };
inline EnumNameList<RecurrentOutput> enum_names(RecurrentOutput) {
  return {{RecurrentOutput::kLast, "last"}, {RecurrentOutput::kSequence, "sequence"}};
}

struct RecurrentOptions {
  int64_t hidden = 1;
  int64_t layers = 1;
  bool bidirectional = false;
  double dropout = 0.0;
  RecurrentOutput output = RecurrentOutput::kLast;
  void describe(Schema& s);
};

/// The module for [steps, features] inputs: [hidden * directions] when `output: last` (each
/// direction's final state of the top layer), [steps, hidden * directions] for `sequence`.
BuiltLayer build_recurrent(const Shape& input, const RecurrentOptions& options, RecurrentCell cell);

}  // namespace kiln::models
