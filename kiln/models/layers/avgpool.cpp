// avgpool: the mean over square windows, 1-D or 2-D by input rank. Padding zeros count in the
// mean, as in PyTorch's default (count_include_pad).

#include "kiln/models/layers/pooling.h"

namespace kiln::models {
namespace {

class AvgPool : public Layer {
 public:
  explicit AvgPool(const PoolOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    Shape output = pooled_shape(input, o_, "avgpool");
    int64_t stride = o_.effective_stride();
    if (input.size() == 3) {
      auto options = torch::nn::AvgPool2dOptions(o_.kernel).stride(stride).padding(o_.padding);
      return {torch::nn::AnyModule(torch::nn::AvgPool2d(options)), output};
    }
    auto options = torch::nn::AvgPool1dOptions(o_.kernel).stride(stride).padding(o_.padding);
    return {torch::nn::AnyModule(torch::nn::AvgPool1d(options)), output};
  }

 private:
  PoolOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "avgpool", AvgPool, PoolOptions,
              "Mean over windows: 2-D for [C, H, W] inputs, 1-D for [C, L].");

}  // namespace kiln::models
