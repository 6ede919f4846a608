// softmax: exp(x) / sum(exp(x)) along one dimension of the example.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct SoftmaxOptions {
  int64_t dim = -1;
  void describe(Schema& s) {
    s.field("dim", dim, "Dimension of the example (batch excluded; -1: the last) to normalise.");
  }
};

class Softmax : public Layer {
 public:
  explicit Softmax(const SoftmaxOptions& options) : dim_(options.dim) {}
  BuiltLayer build(const Shape& input) const override {
    auto rank = static_cast<int64_t>(input.size());
    KILN_CHECK(dim_ >= -rank && dim_ < rank, "softmax dim {} does not exist in inputs {}", dim_,
               shape_text(input));
    int64_t batched = dim_ < 0 ? dim_ : dim_ + 1;  // the module sees the batch dimension too
    return {torch::nn::AnyModule(torch::nn::Softmax(torch::nn::SoftmaxOptions(batched))), input};
  }

 private:
  int64_t dim_;
};

}  // namespace

KILN_REGISTER(layer_registry, "softmax", Softmax, SoftmaxOptions,
              "Normalises one dimension to probabilities: exp(x) / sum(exp(x)).");

}  // namespace kiln::models
