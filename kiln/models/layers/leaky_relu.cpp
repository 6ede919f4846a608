// leaky_relu: x for x >= 0, negative_slope * x below.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct LeakyReluOptions {
  double negative_slope = 0.01;
  void describe(Schema& s) { s.field("negative_slope", negative_slope, "Slope for x < 0."); }
};

class LeakyRelu : public Layer {
 public:
  explicit LeakyRelu(const LeakyReluOptions& options) : slope_(options.negative_slope) {}
  BuiltLayer build(const Shape& input) const override {
    auto options = torch::nn::LeakyReLUOptions().negative_slope(slope_);
    return {torch::nn::AnyModule(torch::nn::LeakyReLU(options)), input};
  }

 private:
  double slope_;
};

}  // namespace

KILN_REGISTER(layer_registry, "leaky_relu", LeakyRelu, LeakyReluOptions,
              "Leaky rectifier: x for x >= 0, negative_slope * x below.");

}  // namespace kiln::models
