// maxpool: the maximum over square windows, 1-D or 2-D by input rank.

#include "kiln/models/layers/pooling.h"

namespace kiln::models {
namespace {

class MaxPool : public Layer {
 public:
  explicit MaxPool(const PoolOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    Shape output = pooled_shape(input, o_, "maxpool");
    int64_t stride = o_.effective_stride();
    if (input.size() == 3) {
      auto options = torch::nn::MaxPool2dOptions(o_.kernel).stride(stride).padding(o_.padding);
      return {torch::nn::AnyModule(torch::nn::MaxPool2d(options)), output};
    }
    auto options = torch::nn::MaxPool1dOptions(o_.kernel).stride(stride).padding(o_.padding);
    return {torch::nn::AnyModule(torch::nn::MaxPool1d(options)), output};
  }

 private:
  PoolOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "maxpool", MaxPool, PoolOptions,
              "Maximum over windows: 2-D for [C, H, W] inputs, 1-D for [C, L].");

}  // namespace kiln::models
