// embedding: a learned vector per integer index (token, category, item id). Inputs hold indices
// of any shape, in any numeric type (batches arrive as float); each index becomes a row of
// `weight`, so [steps] gives [steps, dim].

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct EmbeddingOptions {
  int64_t entries = 1;
  int64_t dim = 1;
  int64_t padding_index = -1;
  void describe(Schema& s) {
    s.field("entries", entries, "How many indices there are (vocabulary size): 0 .. entries-1.")
        .min(1)
        .require();
    s.field("dim", dim, "Length of each vector.").min(1).require();
    s.field("padding_index", padding_index,
            "An index whose vector stays zero and learns nothing (padding); -1 for none.")
        .min(-1);
  }
};

class EmbeddingImpl : public torch::nn::Module {
 public:
  explicit EmbeddingImpl(const EmbeddingOptions& o)
      : entries_(o.entries), padding_index_(o.padding_index) {
    // PyTorch's initialisation: N(0, 1), the padding row zero.
    weight_ = register_parameter("weight", torch::randn({o.entries, o.dim}));
    if (padding_index_ >= 0) {
      torch::NoGradGuard no_grad;
      weight_[padding_index_].zero_();
    }
  }

  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor indices = input.to(torch::kLong);
    if (indices.numel() > 0) {
      // torch's own message ("index out of range in self") names neither the layer nor the index.
      auto [min, max] = torch::aminmax(indices);
      int64_t low = min.item<int64_t>(), high = max.item<int64_t>();
      KILN_CHECK(low >= 0 && high < entries_,
                 "embedding got index {} but has entries 0 .. {}; raise `entries` or check the "
                 "input",
                 low < 0 ? low : high, entries_ - 1);
    }
    return torch::embedding(weight_, indices, padding_index_);
  }

 private:
  int64_t entries_, padding_index_;
  torch::Tensor weight_;
};
TORCH_MODULE(Embedding);

class EmbeddingLayer : public Layer {
 public:
  explicit EmbeddingLayer(const EmbeddingOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(o_.padding_index < o_.entries, "embedding padding_index {} is not below entries {}",
               o_.padding_index, o_.entries);
    Shape output = input;
    output.push_back(o_.dim);
    return {torch::nn::AnyModule(Embedding(o_)), output};
  }

 private:
  EmbeddingOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "embedding", EmbeddingLayer, EmbeddingOptions,
              "A learned vector per integer index: [steps] indices give [steps, dim].");

}  // namespace kiln::models
