#pragma once
// The model interface: a torch module mapping a batch of inputs to a batch of outputs, built for a
// known example shape. Registered models receive that shape at construction.
// Thread-safety: as torch::nn::Module (not safe to train from several threads).

#include <torch/torch.h>

#include "kiln/core/registry.h"
#include "kiln/models/layer.h"

namespace kiln::models {

/// A forward pass's outputs by name, the main one first.
using NamedOutputs = torch::OrderedDict<std::string, torch::Tensor>;

class Model : public torch::nn::Module {
 public:
  /// The main output: what the loss and the metrics see.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
  /// Shape of one example of the main output.
  virtual Shape output_shape() const = 0;
  /// Name of the main output: "logits" for classifiers, "reconstruction" for autoencoders,
  /// "output" where nothing more is known.
  virtual std::string output_name() const { return "output"; }
  /// Every output (an autoencoder's `embedding` too), the main one first.
  virtual NamedOutputs forward_named(const torch::Tensor& input);
};

using ModelRegistry = Registry<Model, const Shape&>;
ModelRegistry& model_registry();

/// Builds the model a resolved spec names, for examples of shape `input`.
std::shared_ptr<Model> build_model(const ComponentSpec& spec, const Shape& input);

}  // namespace kiln::models
