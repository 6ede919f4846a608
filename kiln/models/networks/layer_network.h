#pragma once
// Zoo networks that are plain stacks of layers (mlp, tfdoc_cnn, lenet5, rnn_classifier) write
// themselves as the layer list a user would put under `layers:` and build it as `sequential`
// does: the same shape inference and errors, parameters named layers.N.*.

#include <vector>

#include "kiln/models/model.h"

namespace kiln::models {

class LayerNetwork : public Model {
 public:
  /// Builds `layers` (JSON layer specs) for `input`; errors name the config path "model".
  LayerNetwork(const std::vector<Json>& layers, const Shape& input,
               std::string output_name = "logits");

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

}  // namespace kiln::models
