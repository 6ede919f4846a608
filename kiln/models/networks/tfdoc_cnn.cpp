// tfdoc_cnn: the convolutional network of TensorFlow's "Build a CNN with Estimators" tutorial and
// of the Fashion-MNIST benchmark: two 5x5 convolutions (32, 64) with relu and 2x2 max pooling,
// a dense layer of 1024, dropout 0.4, the output layer.

#include "kiln/models/networks/layer_network.h"

namespace kiln::models {
namespace {

struct TfdocCnnOptions {
  int64_t num_classes = 10;
  std::vector<int64_t> channels{32, 64};
  int64_t dense = 1024;
  double dropout = 0.4;
  void describe(Schema& s) {
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
    s.field("channels", channels, "Filters of each 5x5 convolution (each followed by pooling).")
        .each_min(1);
    s.field("dense", dense, "Width of the dense layer.").min(1);
    s.field("dropout", dropout, "Dropout before the output layer.").in_range(0, 1);
  }
};

std::vector<Json> tfdoc_cnn_layers(const TfdocCnnOptions& o) {
  std::vector<Json> layers;
  for (int64_t filters : o.channels) {
    layers.push_back(layer("conv2d", {{"out", filters}, {"kernel", 5}, {"padding", "same"}}));
    layers.push_back("relu");
    layers.push_back(layer("maxpool", {{"kernel", 2}}));
  }
  layers.insert(layers.end(),
                {"flatten", layer("linear", {{"out", o.dense}}), "relu",
                 layer("dropout", {{"p", o.dropout}}), layer("linear", {{"out", o.num_classes}})});
  return layers;
}

class TfdocCnn : public LayerNetwork {
 public:
  TfdocCnn(const TfdocCnnOptions& options, const Shape& input)
      : LayerNetwork(tfdoc_cnn_layers(options), input) {}
};

}  // namespace

KILN_REGISTER(model_registry, "tfdoc_cnn", TfdocCnn, TfdocCnnOptions,
              "The TensorFlow tutorial CNN: 2 x (conv 5x5, relu, maxpool), dense 1024, dropout "
              "0.4.");

}  // namespace kiln::models
