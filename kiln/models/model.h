#pragma once
// The model interface: a torch module mapping a batch of inputs to a batch of outputs, built for a
// known example shape. Registered models receive that shape at construction.
// Thread-safety: as torch::nn::Module (not safe to train from several threads).

#include <torch/torch.h>

#include "kiln/core/registry.h"
#include "kiln/models/layer.h"

namespace kiln::models {

class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
  /// Shape of one output example.
  virtual Shape output_shape() const = 0;
};

using ModelRegistry = Registry<Model, const Shape&>;
ModelRegistry& model_registry();

/// Builds the model a resolved spec names, for examples of shape `input`.
std::shared_ptr<Model> build_model(const ComponentSpec& spec, const Shape& input);

}  // namespace kiln::models
