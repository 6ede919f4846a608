// residual: y = body(x) + shortcut(x), then an optional activation (He et al., 2016). The shortcut
// is the identity when the body keeps the shape; otherwise it is given, or made as a projection.

#include <fmt/format.h>

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct ResidualOptions {
  LayerList body;
  LayerList shortcut;
  bool projection = true;
  ComponentSpec activation{"layer"};
  void describe(Schema& s) {
    s.field("body", body, "The layers of the residual branch.")
        .check([](const LayerList& list) { return !list.items.empty(); }, "with at least one layer")
        .require();
    s.field("shortcut", shortcut,
            "Layers of the shortcut branch; empty for the identity, or a projection when the "
            "body changes the shape.");
    s.field("projection", projection,
            "When the body changes the shape and no shortcut is given, project x to it: a "
            "strided 1x1 convolution and batchnorm for [C, ...] inputs, linear for [features].");
    s.field("activation", activation, "A layer applied after the sum, e.g. relu; none if unset.");
  }
};

class ResidualImpl : public torch::nn::Module {
 public:
  ResidualImpl(LayerStack body, LayerStack shortcut, torch::nn::AnyModule activation)
      : body_(register_module("body", body)), activation_(std::move(activation)) {
    if (!shortcut->is_empty()) shortcut_ = register_module("shortcut", shortcut);
    if (!activation_.is_empty()) register_module("activation", activation_.ptr());
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor sum = call(body_, x) + (shortcut_ ? call(shortcut_, x) : x);
    if (activation_.is_empty()) return sum;
    observe_begin(*activation_.ptr());
    torch::Tensor output = activation_.forward(sum);
    observe(*activation_.ptr(), sum, output);
    return output;
  }

 private:
  LayerStack body_, shortcut_{nullptr};
  torch::nn::AnyModule activation_;
};

// The stride that brings `from` to `to` in a 1x1 convolution, or 0 when none does.
int64_t projection_stride(int64_t from, int64_t to) {
  int64_t stride = (from + to - 1) / to;
  return (from - 1) / stride + 1 == to ? stride : 0;
}

LayerList projection_layers(const Shape& from, const Shape& to, const std::string& path) {
  std::string mismatch = fmt::format("the body maps {} to {}", shape_text(from), shape_text(to));
  KILN_CHECK(from.size() == to.size(), "{}; the shortcut cannot project across ranks", mismatch);
  LayerList layers;
  if (from.size() == 1) {
    layers.items.push_back(
        make_layer_spec({{"type", "linear"}, {"out", to[0]}}, path + ".shortcut[0]"));
    return layers;
  }
  KILN_CHECK(from.size() <= 3, "{}; projection works on [C, L] and [C, H, W] inputs", mismatch);
  int64_t stride = projection_stride(from[1], to[1]);
  for (size_t d = 2; d < from.size(); ++d)
    KILN_CHECK(projection_stride(from[d], to[d]) == stride,
               "{}; no single stride of a 1x1 convolution does that", mismatch);
  KILN_CHECK(stride > 0, "{}; no stride of a 1x1 convolution does that", mismatch);
  const char* conv = from.size() == 2 ? "conv1d" : "conv2d";
  Json conv_spec = {{"type", conv},     {"out", to[0]},       {"kernel", 1},
                    {"stride", stride}, {"padding", "valid"}, {"bias", false}};
  layers.items.push_back(make_layer_spec(conv_spec, path + ".shortcut[0]"));
  layers.items.push_back(make_layer_spec("batchnorm", path + ".shortcut[1]"));
  return layers;
}

class Residual : public Layer {
 public:
  explicit Residual(const ResidualOptions& options) : options_(options) {}

  BuiltLayer build(const Shape& input) const override { return build_in(input, BuildScope{}); }

  BuiltLayer build_in(const Shape& input, const BuildScope& scope) const override {
    BuiltStack body = build_stack(options_.body, input, scope);
    BuiltStack shortcut{LayerStack(), input};
    if (!options_.shortcut.items.empty()) {
      shortcut = build_stack(options_.shortcut, input, scope);
    } else if (body.output != input) {
      KILN_CHECK(options_.projection,
                 "the body maps {} to {}; give a shortcut that does the same, or set "
                 "projection: true",
                 shape_text(input), shape_text(body.output));
      shortcut = build_stack(projection_layers(input, body.output, path()), input, scope);
    }
    KILN_CHECK(shortcut.output == body.output, "the body gives {} but the shortcut gives {}",
               shape_text(body.output), shape_text(shortcut.output));
    torch::nn::AnyModule activation;
    Shape output = body.output;
    if (!options_.activation.empty()) {
      BuiltLayer built = layer_registry().create(options_.activation)->build(output);
      activation = built.module;
      output = built.output;
    }
    auto module = std::make_shared<ResidualImpl>(body.modules, shortcut.modules, activation);
    return {torch::nn::AnyModule(module), output};
  }

 private:
  // The config path of this layer, known from where its body was read.
  std::string path() const {
    const std::string& first = options_.body.items.front().path;
    auto cut = first.rfind(".body");
    return cut == std::string::npos ? first : first.substr(0, cut);
  }

  ResidualOptions options_;
};

}  // namespace

KILN_REGISTER(layer_registry, "residual", Residual, ResidualOptions,
              "A residual connection: body(x) + shortcut(x), then an optional activation.");

}  // namespace kiln::models
