#pragma once
// Checkpoints (DESIGN.md §6): `checkpoints/step-000001200/` holding model.safetensors,
// optimizer.pt, train_state.json, config.yaml and a MANIFEST with the size and CRC-32C of every
// other file. A checkpoint is written under a temporary name, fsynced and renamed, so a crash never
// leaves a directory that looks complete; MANIFEST is checked on every load.
// Thread-safety: one writer per run directory.

#include <torch/torch.h>

#include <map>
#include <string>

#include "kiln/core/json.h"
#include "kiln/io/safetensors.h"

namespace kiln::engine {

/// What goes into one checkpoint.
struct CheckpointContents {
  int64_t step = 0;
  const torch::nn::Module* model = nullptr;
  const torch::optim::Optimizer* optimizer = nullptr;  // optional
  Json train_state = Json::object();
  std::string config_yaml;
};

/// Writes a checkpoint under `checkpoints_dir` and points `checkpoints/latest` at it; returns its
/// directory.
std::string save_checkpoint(const std::string& checkpoints_dir, const CheckpointContents& contents);

/// The checkpoint directory `which` names for a run: `last` (checkpoints/latest), `best`
/// (checkpoints/best, else last) or a path. Throws UsageError when there is none.
std::string find_checkpoint(const std::string& run_dir, const std::string& which);

/// Verifies the MANIFEST of a checkpoint directory; throws DataError naming the bad file.
void verify_checkpoint(const std::string& checkpoint_dir);

/// Copies the weights of `checkpoint_dir` (verified) into `model`; every parameter and buffer
/// must be present with its shape, and nothing else may be.
void load_model_weights(const std::string& checkpoint_dir, torch::nn::Module& model);

/// A model's parameters and buffers by dotted name.
std::map<std::string, torch::Tensor> named_state(const torch::nn::Module& model);

/// A safetensors tensor as a torch tensor viewing the file's bytes; DataError naming `file` for a
/// dtype torch lacks.
torch::Tensor tensor_view(const io::SafeTensor& tensor, const std::string& file);

/// model.safetensors bytes for a module: its parameters and buffers by dotted name, on the CPU.
std::string serialize_weights(const torch::nn::Module& model);

}  // namespace kiln::engine
