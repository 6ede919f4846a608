#pragma once
// Which activations of a model are its embedding, for TensorBoard's projector and the `embed`
// signature of an export: the output of the layer a config names, or by default the input of the
// last layer the model calls for its main output (a multi_head model's first head), the features
// its classifier reads. Seen through a CallWatcher (observe.h) as the model runs.
// Thread-safety: const after construction.

#include <torch/torch.h>

#include <set>
#include <string>

#include "kiln/models/model.h"

namespace kiln::models {

class EmbeddingLayer {
 public:
  /// `layer` "" for the default; an unknown name is a ConfigError at `config_path` listing the
  /// model's layers.
  EmbeddingLayer(const Model& model, const std::string& layer, const std::string& config_path);

  /// The embedding when this call gives it, else an undefined tensor; the last defined one of a
  /// forward pass is the embedding.
  torch::Tensor pick(const torch::nn::Module& module, const torch::Tensor& input,
                     const torch::Tensor& output) const;

 private:
  const torch::nn::Module* layer_ = nullptr;  // null: the input of the last leaf call
  std::set<const torch::nn::Module*> leaves_;
};

/// The embedding of `input`: runs the model's main output once, watching its calls.
torch::Tensor embed(Model& model, const EmbeddingLayer& layer, const torch::Tensor& input);

}  // namespace kiln::models
