#pragma once
// `kiln model summary`: one row per module path (type, output shape, trainable and frozen
// parameters), found by running the model once on a zero example with calls observed, then the
// totals and the multiply-accumulates of one example.

#include <string>
#include <vector>

#include "kiln/models/model.h"

namespace kiln::models {

struct SummaryRow {
  std::string path;                   // "" for the model itself
  std::string type;                   // "Conv2d", "Residual", ...
  int depth = 0;                      // 0 for the model, 1 for its children, ...
  std::vector<Shape> outputs;         // one example's output shape per call; empty if not observed
  int64_t trainable = 0, frozen = 0;  // parameters, this module's and its children's
};

struct ModelSummary {
  Shape input;
  std::vector<SummaryRow> rows;
  int64_t trainable = 0, frozen = 0;
  int64_t multiply_accumulates = 0;  // per example, of convolutions, linear, recurrent, attention
};

/// A module's type as the summary names it: "Conv2d", "Residual", "Sequential", ...
std::string module_type(const torch::nn::Module& module);

/// Runs `model` once (eval mode, no gradients, on its current device) for an example of `input`.
ModelSummary summarize(Model& model, const Shape& input);

/// The table: rows no deeper than `max_depth` (< 0: all), then the totals.
std::string format_summary(const ModelSummary& summary, int max_depth = -1);

/// "1,234,567".
std::string with_thousands(int64_t value);
/// "421,834 parameters", with the frozen share when train.freeze stopped some.
std::string parameters_text(const torch::nn::Module& model);

/// A row's first two cells, as the summary and `kiln bench` print them: its path indented by its
/// depth ("(model)" for the model), and its output shapes ("-" when it was not called).
std::string row_label(const SummaryRow& row);
std::string outputs_text(const SummaryRow& row);

}  // namespace kiln::models
