// mlp: a multi-layer perceptron over flattened inputs: hidden linear layers with an activation
// (and optional batchnorm and dropout), then an output layer.

#include "kiln/models/networks/layer_network.h"

namespace kiln::models {
namespace {

struct MlpOptions {
  int64_t num_classes = 1;
  std::vector<int64_t> hidden{256, 128};
  Activation activation = Activation::kRelu;
  double dropout = 0.0;
  bool batchnorm = false;
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Width of the output layer: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("hidden", hidden, "Widths of the hidden layers, in order.").each_min(1);
    s.field("activation", activation, "After each hidden layer.");
    s.field("dropout", dropout, "Dropout after each hidden activation; 0 for none.").in_range(0, 1);
    s.field("batchnorm", batchnorm, "Batch normalisation before each hidden activation.");
  }
};

std::vector<Json> mlp_layers(const MlpOptions& o) {
  std::vector<Json> layers{"flatten"};
  for (Json& layer :
       perceptron_layers({o.hidden, o.activation, o.dropout, o.batchnorm}, o.num_classes))
    layers.push_back(std::move(layer));
  return layers;
}

class Mlp : public LayerNetwork {
 public:
  Mlp(const MlpOptions& options, const Shape& input) : LayerNetwork(mlp_layers(options), input) {}
};

}  // namespace

KILN_REGISTER(model_registry, "mlp", Mlp, MlpOptions,
              "Multi-layer perceptron: flatten, hidden linear layers, an output layer.");

}  // namespace kiln::models
