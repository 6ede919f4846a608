#pragma once
// A model written in PyTorch (`model: {type: torchscript, file: net.pt}`): a module the user's
// PyTorch scripted (torch.jit.script) and saved (torch.jit.save), trained by kiln in any loop.
// Its parameters and buffers are registered under their PyTorch names (`fc1.weight`) in modules
// that mirror the scripted module's tree; they are the very tensors the scripted code reads, so
// optimizers, checkpoints, freezing, the EMA and moving to a device act on the scripted module
// as on a kiln model. Exported as a TorchScript version folder (docs/serving.md).
// Thread-safety: as Model.

#include <torch/script.h>

#include <string>

#include "kiln/models/model.h"

namespace kiln::models {

struct TorchScriptOptions {
  std::string file;
  std::string output = "output";
  void describe(Schema& s);
};

class TorchScriptModel : public Model {
 public:
  /// Reads `options.file` (read_torchscript) and builds the model for examples of `input`.
  TorchScriptModel(const TorchScriptOptions& options, const Inputs& input);
  /// `module` as read from `file` (named in messages); `output` names its main output. Runs
  /// forward once, in eval mode, on zeros of `input`'s shape to learn the output's shape: a
  /// ConfigError at `file` when that fails or gives no single tensor.
  TorchScriptModel(torch::jit::Module module, std::string file, std::string output,
                   const Shape& input);

  torch::Tensor forward(const torch::Tensor& input) override;
  Shape output_shape() const override { return output_shape_; }
  std::string output_name() const override { return output_; }
  void train(bool on = true) override;

  /// Runs the module's method `name` (forward, training_step) on `inputs` as PyTorch's eager
  /// mode would: without the graph executor's optimizations, which it applies from some later
  /// call on and which change the last bits of results, so that a run resumed from a checkpoint
  /// computes what the run it continues would have.
  c10::IValue run(const std::string& name, std::vector<c10::IValue> inputs);
  /// The scripted module, which shares this model's tensors.
  torch::jit::Module& scripted() { return module_; }
  bool has_method(const std::string& name) const { return module_.find_method(name).has_value(); }
  /// The file it was read from, for messages.
  const std::string& file() const { return file_; }

 private:
  torch::jit::Module module_;
  std::string file_, output_;
  Shape output_shape_;
};

/// The model as a TorchScriptModel, or null when it is another kind.
TorchScriptModel* as_torchscript(Model& model);

}  // namespace kiln::models
