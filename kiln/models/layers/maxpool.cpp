// maxpool: the maximum over square windows, 1-D or 2-D by input rank.

#include "kiln/models/layer.h"
#include "kiln/models/layers/padding.h"

namespace kiln::models {
namespace {

struct MaxPoolOptions {
  int64_t kernel = 2;
  int64_t stride = 0;
  int64_t padding = 0;
  void describe(Schema& s) {
    s.field("kernel", kernel, "Window size.").min(1);
    s.field("stride", stride, "Step between windows; 0 means the window size.").min(0);
    s.field("padding", padding, "Implicit -inf padding on each side; at most kernel / 2.").min(0);
  }
};

class MaxPool : public Layer {
 public:
  explicit MaxPool(const MaxPoolOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 2 || input.size() == 3,
               "maxpool expects inputs [channels, length] or [channels, height, width], got {}",
               shape_text(input));
    KILN_CHECK(o_.padding * 2 <= o_.kernel, "maxpool padding {} exceeds half the kernel {}",
               o_.padding, o_.kernel);
    int64_t stride = o_.stride == 0 ? o_.kernel : o_.stride;
    Shape output = input;
    for (size_t d = 1; d < input.size(); ++d) {
      output[d] = window_output(input[d], o_.kernel, stride, o_.padding, 1);
      KILN_CHECK(output[d] > 0, "maxpool kernel {} does not fit inputs {}", o_.kernel,
                 shape_text(input));
    }
    if (input.size() == 3) {
      auto options = torch::nn::MaxPool2dOptions(o_.kernel).stride(stride).padding(o_.padding);
      return {torch::nn::AnyModule(torch::nn::MaxPool2d(options)), output};
    }
    auto options = torch::nn::MaxPool1dOptions(o_.kernel).stride(stride).padding(o_.padding);
    return {torch::nn::AnyModule(torch::nn::MaxPool1d(options)), output};
  }

 private:
  MaxPoolOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "maxpool", MaxPool, MaxPoolOptions,
              "Maximum over windows: 2-D for [C, H, W] inputs, 1-D for [C, L].");

}  // namespace kiln::models
