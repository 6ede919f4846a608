// binary_cross_entropy: sigmoid cross-entropy of logits against 0/1 targets of the same shape,
// each output column a yes/no question of its own (multi-label classification, or one logit for
// a binary task).

#include "kiln/losses/loss.h"
#include "kiln/losses/same_shape.h"

namespace kiln::losses {
namespace {

struct BinaryCrossEntropyOptions {
  std::vector<double> pos_weight;
  void describe(Schema& s) {
    s.field("pos_weight", pos_weight,
            "Weight of the positive examples' term, one per output column (or one for all); "
            "> 1 raises recall on rare labels. Empty: 1.")
        .check(
            [](const std::vector<double>& w) {
              for (double v : w)
                if (!(v > 0)) return false;
              return true;
            },
            "with every item > 0");
  }
};

class BinaryCrossEntropy : public Loss {
 public:
  explicit BinaryCrossEntropy(const BinaryCrossEntropyOptions& o) {
    if (!o.pos_weight.empty()) pos_weight_ = torch::tensor(o.pos_weight, torch::kFloat32);
  }
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    torch::Tensor matched = same_shape_target("binary_cross_entropy", output, target);
    auto options = torch::nn::functional::BinaryCrossEntropyWithLogitsFuncOptions();
    if (pos_weight_.defined()) {
      int64_t columns = output.dim() >= 2 ? output.size(-1) : 1;
      // Relative to the loss's own path: the objective names the config path.
      if (pos_weight_.numel() != 1 && pos_weight_.numel() != columns)
        throw ConfigError("pos_weight", "",
                          fmt::format("binary_cross_entropy: pos_weight has {} values but the "
                                      "outputs have {} columns; give one per column, or one for "
                                      "all",
                                      pos_weight_.numel(), columns));
      options.pos_weight(pos_weight_.to(output.device(), output.scalar_type()));
    }
    // The logits form: log-sum-exp inside, so large logits do not overflow as sigmoid + log would.
    return torch::nn::functional::binary_cross_entropy_with_logits(output, matched, options);
  }
  Scores scores() const override { return Scores::kSigmoid; }

 private:
  torch::Tensor pos_weight_;
};

}  // namespace

KILN_REGISTER(loss_registry, "binary_cross_entropy", BinaryCrossEntropy, BinaryCrossEntropyOptions,
              "Sigmoid cross-entropy of logits against 0/1 targets of the same shape "
              "(multi-label), optionally weighting positives.");

}  // namespace kiln::losses
