#pragma once
// Checkpoints (docs/design.md §6): `checkpoints/step-000001200/` holding model.safetensors,
// optimizer.pt, train_state.json, config.yaml, inputs.json (what the model takes) and a MANIFEST
// with the size and CRC-32C of every other file, plus a <callback>.safetensors for each callback
// with tensor state (ema.safetensors).
// A checkpoint is written under a temporary name, fsynced and renamed, so a crash never leaves a
// directory that looks complete; MANIFEST is checked on every load, and a checkpoint that fails
// it is skipped with a warning in favour of the newest one that passes.
// Thread-safety: one writer per run directory.

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/engine/train_state.h"

#include "kiln/core/json.h"
#include "kiln/io/safetensors.h"

namespace kiln::engine {

using NamedTensors = std::map<std::string, torch::Tensor>;

/// What goes into one checkpoint.
struct CheckpointContents {
  int64_t step = 0;
  const torch::nn::Module* model = nullptr;
  const torch::optim::Optimizer* optimizer = nullptr;  // optional
  Json train_state = Json::object();
  std::string config_yaml;
  std::map<std::string, NamedTensors> tensor_files;  // file stem (e.g. "ema") -> tensors
  Json inputs = nullptr;  // what the model takes (open_model.h), saved as inputs.json
};

/// The file-system steps of a checkpoint write, replaceable so tests can fail each one in turn.
class CheckpointFileSystem {
 public:
  virtual ~CheckpointFileSystem() = default;
  /// Writes and fsyncs a whole file.
  virtual void write(const std::string& path, const std::string& bytes);
  virtual void make_directory(const std::string& path);
  virtual void sync_directory(const std::string& path);
  virtual void rename(const std::string& from, const std::string& to);
  virtual void remove_all(const std::string& path);
};
CheckpointFileSystem& real_file_system();

/// Writes a checkpoint under `checkpoints_dir` and points `checkpoints/latest` at it; returns its
/// directory.
std::string save_checkpoint(const std::string& checkpoints_dir, const CheckpointContents& contents,
                            CheckpointFileSystem& fs = real_file_system());

/// Points `checkpoints/<pointer>` (latest, best) at the checkpoint directory `name`, atomically.
void write_pointer(const std::string& checkpoints_dir, const std::string& pointer,
                   const std::string& name, CheckpointFileSystem& fs = real_file_system());

/// The step-NNNNNNNNN directories under `checkpoints_dir`, oldest first (temporary ones left out).
std::vector<std::string> checkpoint_directories(const std::string& checkpoints_dir);

/// The verified checkpoint directory `which` names for a run: `last` (checkpoints/latest), `best`
/// (checkpoints/best, else last) or a path. A pointed-to checkpoint that fails verification is
/// skipped, with a warning, for the newest older one that passes; warnings go to `warnings`, or
/// to stderr when it is null. Throws UsageError when the run has none, Error when none passes.
std::string find_checkpoint(const std::string& run_dir, const std::string& which,
                            std::vector<std::string>* warnings = nullptr);

/// Verifies the MANIFEST of a folder (a checkpoint, an export's version folder): every file it
/// lists is there with its size and CRC-32C, and nothing else is. Throws DataError naming the bad
/// file; `kind` names the folder in the message.
void verify_manifest(const std::string& folder, const std::string& kind);
/// verify_manifest of a checkpoint directory.
void verify_checkpoint(const std::string& checkpoint_dir);

/// Copies the weights of `checkpoint_dir` (verified) into `model`; every parameter and buffer
/// must be present with its shape, and nothing else may be.
void load_model_weights(const std::string& checkpoint_dir, torch::nn::Module& model);
/// Copies the safetensors file at `path` into `model`'s parameters and buffers: every tensor the
/// model has, of its shape and dtype, finite, and no other. Throws DataError naming the file.
void copy_weights_from(const std::string& path, torch::nn::Module& model);

/// The weights to evaluate or export with: ema.safetensors when the run kept an EMA of its weights,
/// else model.safetensors. Returns the file used.
std::string load_evaluation_weights(const std::string& checkpoint_dir, torch::nn::Module& model);

/// Loads optimizer.pt into `optimizer` (already built over the same parameters).
void load_optimizer_state(const std::string& checkpoint_dir, torch::optim::Optimizer& optimizer);

/// A safetensors file's tensors, copied into memory.
NamedTensors read_tensor_file(const std::string& path);

/// A model's parameters and buffers by dotted name.
NamedTensors named_state(const torch::nn::Module& model);

/// A safetensors tensor as a torch tensor viewing the file's bytes; DataError naming `file` for a
/// dtype torch lacks.
torch::Tensor tensor_view(const io::SafeTensor& tensor, const std::string& file);

/// model.safetensors bytes for a module: its parameters and buffers by dotted name, on the CPU.
std::string serialize_weights(const torch::nn::Module& model);
/// safetensors bytes for named tensors, on the CPU.
std::string serialize_tensors(const NamedTensors& tensors);

}  // namespace kiln::engine
