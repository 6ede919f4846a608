#pragma once
// The `regularization:` entries of a (stage's) config over the model's trainable parameters: each
// entry picks its parameters by name pattern (leaving 1-D ones out unless `vectors`), and the
// trainer adds their weighted penalties to the loss once per optimizer step.
// Thread-safety: penalty() reads the parameters; call it on the training thread.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "kiln/losses/regularizer.h"

namespace kiln::engine {

/// A regularizer built from the config's regularization[i], with that path for errors.
struct RegularizerEntry {
  std::unique_ptr<losses::Regularizer> regularizer;
  std::string path;
};

class Regularization {
 public:
  Regularization() = default;
  /// Resolves each entry over the trainable (requires_grad) `parameters`. A pattern that selects
  /// none of them is a ConfigError at regularization[i].params[j], naming what it would need
  /// (vectors: true for a 1-D parameter; train.freeze for a frozen one) or the names there are.
  Regularization(std::vector<RegularizerEntry> entries,
                 const torch::OrderedDict<std::string, torch::Tensor>& parameters);

  bool empty() const { return terms_.empty(); }
  /// The weighted sum of every entry's penalty over its parameters, to add to the loss (an
  /// undefined tensor when empty()).
  torch::Tensor penalty() const;

 private:
  struct Term {
    std::unique_ptr<losses::Regularizer> regularizer;
    std::vector<torch::Tensor> parameters;
  };
  std::vector<Term> terms_;
};

}  // namespace kiln::engine
