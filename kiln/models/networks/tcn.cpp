// tcn: a temporal convolutional network (Bai, Kolter and Koltun, 2018) for time series: residual
// blocks of two causal dilated 1-D convolutions (dilation 1, 2, 4, ... block by block), each
// followed by relu and dropout, with a 1x1 convolution on the shortcut where the width changes.
// Causal: the output at step t sees inputs up to t only. The output layer reads the last step
// (forecasting, classifying a window) or every step. The paper's weight normalisation is left
// out: batches here are large enough to train without it.

#include <fmt/format.h>

#include "kiln/models/model.h"

namespace kiln::models {
namespace {

// Which axis of a tcn's input is time; whether it predicts at the last step or at every step.
enum class TcnLayout { kChannelsFirst, kStepsFirst };
enum class TcnOutput { kLast, kSequence };
EnumNameList<TcnLayout> enum_names(TcnLayout) {
  return {{TcnLayout::kChannelsFirst, "channels_first"}, {TcnLayout::kStepsFirst, "steps_first"}};
}
EnumNameList<TcnOutput> enum_names(TcnOutput) {
  return {{TcnOutput::kLast, "last"}, {TcnOutput::kSequence, "sequence"}};
}

struct TcnOptions {
  int64_t num_classes = 1;
  std::vector<int64_t> channels{32, 32, 32, 32};
  int64_t kernel = 3;
  double dropout = 0.0;
  TcnLayout layout = TcnLayout::kChannelsFirst;
  TcnOutput output = TcnOutput::kLast;
  void describe(Schema& s) {
    s.field("num_classes", num_classes, "Outputs per prediction: classes, or regression targets.")
        .min(1)
        .require();
    s.field("channels", channels, "Width of each residual block; block i has dilation 2^i.")
        .each_min(1)
        .check([](const auto& list) { return !list.empty(); }, "with at least one block");
    s.field("kernel", kernel, "Kernel size of every convolution.").min(2);
    s.field("dropout", dropout, "Dropout after each convolution's relu.").in_range(0, 1);
    s.field("layout", layout,
            "channels_first: inputs [channels, length] (signals); steps_first: [steps, "
            "features] (CSV windows).");
    s.field("output", output, "last: predict from the last step; sequence: at every step.");
  }
};

class TemporalBlockImpl : public torch::nn::Module {
 public:
  TemporalBlockImpl(int64_t in, int64_t out, int64_t kernel, int64_t dilation, double dropout)
      : left_pad_((kernel - 1) * dilation), dropout_(dropout) {
    auto conv = [&](int64_t from) {
      return torch::nn::Conv1d(torch::nn::Conv1dOptions(from, out, kernel).dilation(dilation));
    };
    conv1_ = register_module("conv1", conv(in));
    conv2_ = register_module("conv2", conv(out));
    if (in != out) downsample_ = register_module("downsample", torch::nn::Conv1d(in, out, 1));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = causal(conv1_, x);
    y = causal(conv2_, y);
    return torch::relu(y + (downsample_ ? call(downsample_, x) : x));
  }

 private:
  // Zeros on the left only, so no step sees the future; then relu and dropout.
  torch::Tensor causal(torch::nn::Conv1d& conv, const torch::Tensor& x) {
    torch::Tensor y = torch::relu(call(conv, torch::constant_pad_nd(x, {left_pad_, 0})));
    return dropout_ > 0 ? torch::dropout(y, dropout_, is_training()) : y;
  }

  int64_t left_pad_;
  double dropout_;
  torch::nn::Conv1d conv1_{nullptr}, conv2_{nullptr}, downsample_{nullptr};
};
TORCH_MODULE(TemporalBlock);

class Tcn : public Model {
 public:
  Tcn(const TcnOptions& o, const Shape& input)
      : steps_first_(o.layout == TcnLayout::kStepsFirst), last_(o.output == TcnOutput::kLast) {
    KILN_CHECK(input.size() == 2, "tcn expects {} inputs, got {}",
               steps_first_ ? "[steps, features]" : "[channels, length]", shape_text(input));
    int64_t channels = steps_first_ ? input[1] : input[0];
    int64_t length = steps_first_ ? input[0] : input[1];
    blocks_ = register_module("blocks", torch::nn::ModuleList());
    for (size_t i = 0; i < o.channels.size(); ++i) {
      blocks_->push_back(
          TemporalBlock(channels, o.channels[i], o.kernel, int64_t(1) << i, o.dropout));
      channels = o.channels[i];
    }
    head_ = register_module("head", torch::nn::Linear(channels, o.num_classes));
    if (last_)
      output_ = {o.num_classes};
    else
      output_ = steps_first_ ? Shape{length, o.num_classes} : Shape{o.num_classes, length};
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = steps_first_ ? input.transpose(1, 2) : input;
    for (const auto& block : *blocks_) {
      observe_begin(*block);
      torch::Tensor y = block->as<TemporalBlockImpl>()->forward(x);
      observe(*block, x, y);
      x = y;
    }
    if (last_) return call(head_, x.select(2, -1));
    torch::Tensor per_step = call(head_, x.transpose(1, 2));  // [batch, length, outputs]
    return steps_first_ ? per_step : per_step.transpose(1, 2);
  }

  Shape output_shape() const override { return output_; }

 private:
  bool steps_first_, last_;
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::Linear head_{nullptr};
  Shape output_;
};

}  // namespace

KILN_REGISTER(model_registry, "tcn", Tcn, TcnOptions,
              "Temporal convolutional network: causal dilated 1-D convolutions for time series.");

}  // namespace kiln::models
