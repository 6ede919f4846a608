// lenet5: LeNet-5 (LeCun et al., 1998): 5x5 convolutions of 6 and 16 filters each followed by
// 2x2 subsampling, then dense layers of 120 and 84. The first convolution pads 28x28 digits to
// the 32x32 the network was designed for.

#include "kiln/models/activation.h"
#include "kiln/models/networks/layer_network.h"

namespace kiln::models {
namespace {

// LeNet-5's subsampling; each name is the layer type it builds.
enum class Lenet5Pool { kAvgpool, kMaxpool };
EnumNameList<Lenet5Pool> enum_names(Lenet5Pool) {
  return {{Lenet5Pool::kAvgpool, "avgpool"}, {Lenet5Pool::kMaxpool, "maxpool"}};
}

struct Lenet5Options {
  int64_t num_classes = 10;
  Activation activation = Activation::kTanh;
  Lenet5Pool pool = Lenet5Pool::kAvgpool;
  int64_t padding = 2;
  void describe(Schema& s) {
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
    s.field("activation", activation, "tanh as in the paper, or relu as usual today.")
        .only({Activation::kTanh, Activation::kRelu, Activation::kSigmoid});
    s.field("pool", pool, "Subsampling: avgpool as in the paper, or maxpool.");
    s.field("padding", padding, "Zeros around the input of the first convolution.").min(0);
  }
};

std::vector<Json> lenet5_layers(const Lenet5Options& o) {
  Json pool = layer(enum_name(o.pool), {{"kernel", 2}});
  Json activation = enum_name(o.activation);
  return {layer("conv2d", {{"out", 6}, {"kernel", 5}, {"padding", o.padding}}),
          activation,
          pool,
          layer("conv2d", {{"out", 16}, {"kernel", 5}, {"padding", "valid"}}),
          activation,
          pool,
          "flatten",
          layer("linear", {{"out", 120}}),
          activation,
          layer("linear", {{"out", 84}}),
          activation,
          layer("linear", {{"out", o.num_classes}})};
}

class Lenet5 : public LayerNetwork {
 public:
  Lenet5(const Lenet5Options& options, const Shape& input)
      : LayerNetwork(lenet5_layers(options), input) {}
};

}  // namespace

KILN_REGISTER(model_registry, "lenet5", Lenet5, Lenet5Options,
              "LeNet-5: conv 6, pool, conv 16, pool, dense 120, 84, output.");

}  // namespace kiln::models
