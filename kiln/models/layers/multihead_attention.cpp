// multihead_attention: self-attention over [steps, dim] sequences; the shape is kept.

#include "kiln/models/layer.h"
#include "kiln/models/layers/attention.h"

namespace kiln::models {
namespace {

struct MultiheadAttentionOptions {
  int64_t heads = 1;
  double dropout = 0.0;
  bool bias = true;
  bool causal = false;
  void describe(Schema& s) {
    s.field("heads", heads, "Attention heads; must divide the input's dim.").min(1).require();
    s.field("dropout", dropout, "Dropout on the attention weights while training.").in_range(0, 1);
    s.field("bias", bias, "Learn biases in the input and output projections.");
    s.field("causal", causal, "Each step attends only to itself and earlier steps.");
  }
};

class MultiheadAttention : public Layer {
 public:
  explicit MultiheadAttention(const MultiheadAttentionOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 2, "multihead_attention expects sequences [steps, dim], got {}",
               shape_text(input));
    KILN_CHECK(input[1] % o_.heads == 0, "multihead_attention: heads {} do not divide dim {} of {}",
               o_.heads, input[1], shape_text(input));
    SelfAttention module(SelfAttentionConfig{input[1], o_.heads, o_.dropout, o_.bias, o_.causal});
    return {torch::nn::AnyModule(module), input};
  }

 private:
  MultiheadAttentionOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "multihead_attention", MultiheadAttention, MultiheadAttentionOptions,
              "Multi-head self-attention over [steps, dim] sequences, named as in "
              "torch.nn.MultiheadAttention.");

}  // namespace kiln::models
