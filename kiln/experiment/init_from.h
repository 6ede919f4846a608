#pragma once
// model.init_from: starting a model from weights saved elsewhere (a kiln run or checkpoint, or any
// safetensors file, e.g. a torchvision state dict saved with safetensors.torch.save_file), whole
// or by submodule through prefix renames, reporting what did not match.

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kiln/experiment/experiment_config.h"

namespace kiln::experiment {

struct InitReport {
  std::string source;                   // the .safetensors file read
  int64_t loaded = 0;                   // tensors copied into the model
  std::vector<std::string> missing;     // model tensors that got no value (kept as initialised)
  std::vector<std::string> unexpected;  // source tensors with no place in the model (ignored)
};

/// Copies the tensors `init` names into `model`. A shape mismatch is always an error; missing or
/// unexpected tensors are one when `init.strict`. Errors are ConfigErrors at model.init_from.
InitReport load_initial_weights(const InitFrom& init, torch::nn::Module& model);

/// "init_from: 120 tensors from F; missing (kept as initialised): a, b; unexpected (ignored): c".
std::string init_report_text(const InitReport& report);

}  // namespace kiln::experiment
