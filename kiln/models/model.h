#pragma once
// The model interface: a torch module mapping a batch of inputs to a batch of outputs, built for a
// known example shape. Registered models receive that shape at construction.
// Thread-safety: as torch::nn::Module (not safe to train from several threads).

#include <torch/torch.h>

#include "kiln/core/input_layout.h"
#include "kiln/core/registry.h"
#include "kiln/models/layer.h"

namespace kiln::models {

/// A forward pass's outputs by name, the main one first.
using NamedOutputs = torch::OrderedDict<std::string, torch::Tensor>;

/// One output of a model with several heads, with what training does with it: its loss (scaled
/// by `weight` in the sum that is minimised), its metrics, and the target it is compared with:
/// "target" (the data's target), "input" (the input itself, for reconstruction) or a named
/// target of the data (a tfrecord dataset's `targets:`).
struct HeadSpec {
  std::string name;
  ComponentSpec loss{"loss"};
  double weight = 1.0;
  ComponentList metrics{"metric"};
  std::string target = "target";
  /// Where the head is configured (`model.heads[1]`), for errors: its loss's path, less ".loss".
  std::string config_path() const { return loss.path.substr(0, loss.path.rfind('.')); }
};

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
  /// The heads of a multi_head model, each with its own loss and metrics; empty for a model
  /// with one output, which the config's top-level `loss` and `metrics` apply to.
  virtual std::vector<HeadSpec> heads() const { return {}; }

  /// As torch's, but modules frozen by freeze() stay in eval mode: their batchnorm statistics
  /// keep the values they were loaded with and their dropout is off, as Keras does for
  /// non-trainable layers.
  void train(bool on = true) override;

 private:
  friend void freeze(Model& model, const std::vector<std::string>& paths,
                     const std::string& config_path);
  friend void unfreeze(Model& model);
  std::vector<std::shared_ptr<torch::nn::Module>> frozen_;
};

/// Stops training the modules (or single parameters) at the dotted `paths` (`layer1`,
/// `layer1.0.conv1`, `fc.bias`): their parameters no longer require gradients and frozen modules
/// stay in eval mode. An unknown path is a ConfigError at `config_path[i]` naming the nearest
/// path and the top-level modules.
void freeze(Model& model, const std::vector<std::string>& paths, const std::string& config_path);

/// Undoes every freeze(): all parameters train again and no module is held in eval mode; a
/// later train cycle (stage) then freezes what its own config says.
void unfreeze(Model& model);

/// What a model is built for: the shape of one example and, for tabular data, where the named
/// parts and category indices of its input row sit (`inputs: {wide: [...], deep: [...]}`). It
/// converts to the shape, so a model that needs only that takes `const Shape&`.
struct Inputs {
  Shape shape;
  InputLayout layout;
  Inputs(Shape s = {}, InputLayout l = {}) : shape(std::move(s)), layout(std::move(l)) {}
  Inputs(std::initializer_list<int64_t> dims) : shape(dims) {}
  operator const Shape&() const { return shape; }
};

using ModelRegistry = Registry<Model, const Inputs&>;
ModelRegistry& model_registry();

/// Builds the model a resolved spec names, for examples of shape `input.shape`.
std::shared_ptr<Model> build_model(const ComponentSpec& spec, const Inputs& input);

}  // namespace kiln::models
