// transformer_encoder: a stack of Transformer encoder layers (self-attention then a feed-forward
// network, each in a residual with layer normalisation) over [steps, dim] sequences. Parameter
// names follow torch.nn.TransformerEncoder (layers.0.self_attn.in_proj_weight, layers.0.linear1,
// layers.0.norm1, ..., norm), so a state dict trained here loads there and back.

#include "kiln/models/activation.h"
#include "kiln/models/layer.h"
#include "kiln/models/layers/attention.h"

namespace kiln::models {
namespace {

struct TransformerEncoderOptions {
  int64_t layers = 1;
  int64_t heads = 1;
  int64_t ff = 0;
  double dropout = 0.1;
  Activation activation = Activation::kRelu;
  bool norm_first = false;
  bool final_norm = false;
  bool causal = false;
  double eps = 1e-5;
  void describe(Schema& s) {
    s.field("layers", layers, "Encoder layers stacked.").min(1);
    s.field("heads", heads, "Attention heads; must divide the input's dim.").min(1).require();
    s.field("ff", ff, "Hidden width of the feed-forward network; 0 for 4 x dim.").min(0);
    s.field("dropout", dropout, "Dropout on attention weights and after each sub-layer.")
        .in_range(0, 1);
    // The activations torch.nn.TransformerEncoderLayer names, so that models exchange with it.
    s.field("activation", activation, "Of the feed-forward network.")
        .only({Activation::kRelu, Activation::kGelu});
    s.field("norm_first", norm_first,
            "Normalise before each sub-layer (pre-norm) instead of after the residual sum.");
    s.field("final_norm", final_norm, "A layer normalisation after the last layer (`norm`).");
    s.field("causal", causal, "Each step attends only to itself and earlier steps.");
    s.field("eps", eps, "Of the layer normalisations.").min(0);
  }
};

class EncoderLayerImpl : public torch::nn::Module {
 public:
  EncoderLayerImpl(int64_t dim, const TransformerEncoderOptions& o)
      : norm_first_(o.norm_first), gelu_(o.activation == Activation::kGelu) {
    int64_t ff = o.ff > 0 ? o.ff : 4 * dim;
    auto norm = [&] { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(o.eps)); };
    auto dropout = [&] { return torch::nn::Dropout(o.dropout); };
    self_attn_ = register_module(
        "self_attn", SelfAttention(SelfAttentionConfig{dim, o.heads, o.dropout, true, o.causal}));
    linear1_ = register_module("linear1", torch::nn::Linear(dim, ff));
    dropout_ = register_module("dropout", dropout());
    linear2_ = register_module("linear2", torch::nn::Linear(ff, dim));
    norm1_ = register_module("norm1", norm());
    norm2_ = register_module("norm2", norm());
    dropout1_ = register_module("dropout1", dropout());
    dropout2_ = register_module("dropout2", dropout());
  }

  torch::Tensor forward(torch::Tensor x) {
    if (norm_first_) {
      x = x + dropout1_(call(self_attn_, call(norm1_, x)));
      return x + dropout2_(feed_forward(call(norm2_, x)));
    }
    x = call(norm1_, x + dropout1_(call(self_attn_, x)));
    return call(norm2_, x + dropout2_(feed_forward(x)));
  }

 private:
  torch::Tensor feed_forward(const torch::Tensor& x) {
    torch::Tensor hidden = call(linear1_, x);
    hidden = gelu_ ? torch::gelu(hidden) : torch::relu(hidden);
    return call(linear2_, dropout_(hidden));
  }

  bool norm_first_, gelu_;
  SelfAttention self_attn_{nullptr};
  torch::nn::Linear linear1_{nullptr}, linear2_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr}, dropout1_{nullptr}, dropout2_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class EncoderImpl : public torch::nn::Module {
 public:
  EncoderImpl(int64_t dim, const TransformerEncoderOptions& o) {
    layers_ = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < o.layers; ++i) layers_->push_back(EncoderLayer(dim, o));
    if (o.final_norm)
      norm_ = register_module("norm",
                              torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(o.eps)));
  }

  torch::Tensor forward(torch::Tensor x) {
    for (const auto& layer : *layers_) {
      observe_begin(*layer);
      torch::Tensor y = layer->as<EncoderLayerImpl>()->forward(x);
      observe(*layer, x, y);
      x = y;
    }
    return norm_ ? call(norm_, x) : x;
  }

 private:
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(Encoder);

class TransformerEncoder : public Layer {
 public:
  explicit TransformerEncoder(const TransformerEncoderOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 2, "transformer_encoder expects sequences [steps, dim], got {}",
               shape_text(input));
    KILN_CHECK(input[1] % o_.heads == 0, "transformer_encoder: heads {} do not divide dim {} of {}",
               o_.heads, input[1], shape_text(input));
    return {torch::nn::AnyModule(Encoder(input[1], o_)), input};
  }

 private:
  TransformerEncoderOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "transformer_encoder", TransformerEncoder, TransformerEncoderOptions,
              "Transformer encoder layers (self-attention and feed-forward, with residuals and "
              "layer norm) over [steps, dim] sequences.");

}  // namespace kiln::models
