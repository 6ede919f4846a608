#pragma once
// Networks that are one stack of layers, parameters named layers.N.*: `sequential`, built from
// the user's `layers:`, and the zoo networks that write themselves as such a list (mlp,
// tfdoc_cnn, lenet5, rnn_classifier), built the same way, with the same shape inference and
// errors.

#include <vector>

#include "kiln/models/activation.h"
#include "kiln/models/model.h"

namespace kiln::models {

class LayerNetwork : public Model {
 public:
  /// Builds `layers` (JSON layer specs) for `input`; errors name the config path "model".
  LayerNetwork(const std::vector<Json>& layers, const Shape& input,
               std::string output_name = "logits");
  /// Holds a stack already built.
  LayerNetwork(BuiltStack stack, std::string output_name);

  torch::Tensor forward(const torch::Tensor& input) override { return call(layers_, input); }
  Shape output_shape() const override { return output_; }
  std::string output_name() const override { return output_name_; }

 private:
  LayerStack layers_;
  Shape output_;
  std::string output_name_;
};

/// `{"type": type, key: value, ...}`, for writing layer lists briefly.
Json layer(const std::string& type, Json options = Json::object());

/// The hidden layers of a multi-layer perceptron (mlp, dnn, wide_deep's deep part).
struct PerceptronLayers {
  std::vector<int64_t> hidden;
  Activation activation = Activation::kRelu;
  double dropout = 0.0;
  bool batchnorm = false;
};

/// Each hidden width as a linear layer, then batchnorm (if asked), the activation and dropout
/// (if p > 0); then a linear layer of `out`.
std::vector<Json> perceptron_layers(const PerceptronLayers& shape, int64_t out);

}  // namespace kiln::models
