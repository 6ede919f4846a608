#pragma once
// Regularizers (config `regularization:`): a penalty on chosen trainable parameters, added to the
// training loss once per optimizer step and logged apart from the data loss, as
// train/regularization. Which parameters an entry covers (`params`, `vectors`) is the engine's
// to resolve (engine/regularization.h); a regularizer only says what one tensor costs.
// Thread-safety: penalty() is const.

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kiln/core/registry.h"

namespace kiln::losses {

struct RegularizerOptions {
  double weight = 0;
  std::vector<std::string> params = {"*"};
  bool vectors = false;
  void describe(Schema& s);
};

class Regularizer {
 public:
  explicit Regularizer(RegularizerOptions options) : options_(std::move(options)) {}
  virtual ~Regularizer() = default;
  /// What `parameter` costs, unweighted: a differentiable scalar.
  virtual torch::Tensor penalty(const torch::Tensor& parameter) const = 0;
  const RegularizerOptions& options() const { return options_; }

 private:
  RegularizerOptions options_;
};

using RegularizerRegistry = Registry<Regularizer>;
RegularizerRegistry& regularizer_registry();

}  // namespace kiln::losses
