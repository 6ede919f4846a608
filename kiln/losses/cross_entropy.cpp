// cross_entropy: softmax cross-entropy between logits and class indices, optionally with label
// smoothing (Szegedy et al.) and per-class weights for unbalanced classes.

#include <numeric>

#include "kiln/losses/loss.h"

namespace kiln::losses {
namespace {

struct CrossEntropyOptions {
  double label_smoothing = 0.0;
  std::vector<double> class_weights;
  void describe(Schema& s) {
    s.field("label_smoothing", label_smoothing,
            "The share of the target's probability spread evenly over all classes.")
        .in_range(0, 1);
    s.field("class_weights", class_weights,
            "One weight per class, scaling its examples' terms (the mean is weighted); empty: "
            "all 1.")
        .each_min(0)
        .check(
            [](const std::vector<double>& w) {
              return w.empty() || std::accumulate(w.begin(), w.end(), 0.0) > 0;
            },
            "with a positive sum");
  }
};

class CrossEntropy : public Loss {
 public:
  explicit CrossEntropy(const CrossEntropyOptions& o) : label_smoothing_(o.label_smoothing) {
    if (!o.class_weights.empty()) weights_ = torch::tensor(o.class_weights, torch::kFloat32);
  }
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1,
               "cross_entropy expects logits [batch, classes] and class indices [batch], got "
               "logits of rank {} and targets of rank {}",
               output.dim(), target.dim());
    auto options =
        torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(label_smoothing_);
    if (weights_.defined()) {
      // The number of classes is known only now; a wrong length would be torch's opaque error.
      // Relative to the loss's own path: the objective names the config path.
      if (weights_.numel() != output.size(1))
        throw ConfigError("class_weights", "",
                          fmt::format("cross_entropy: class_weights has {} weights but the logits "
                                      "have {} classes; give one weight per class",
                                      weights_.numel(), output.size(1)));
      options.weight(weights_.to(output.device(), output.scalar_type()));
    }
    return torch::nn::functional::cross_entropy(output, target, options);
  }
  std::optional<BadTarget> check_targets(const torch::Tensor& output,
                                         const torch::Tensor& target) const override {
    if (output.dim() != 2 || target.dim() != 1 || target.is_floating_point()) return std::nullopt;
    int64_t classes = output.size(1);
    torch::Tensor outside = (target < 0) | (target >= classes);
    if (!outside.any().item<bool>()) return std::nullopt;
    int64_t row = outside.nonzero()[0][0].item<int64_t>();
    return BadTarget{row, fmt::format("class {} is outside the model's {} classes (0 to {})",
                                      target[row].item<int64_t>(), classes, classes - 1)};
  }
  // torch divides a weighted mean (its label-smoothing term too) by the targets' weights.
  double mean_weight(const torch::Tensor& output, const torch::Tensor& target) const override {
    if (!weights_.defined()) return Loss::mean_weight(output, target);
    return weights_.index_select(0, target.to(torch::kCPU, torch::kInt64)).sum().item<double>();
  }

 private:
  double label_smoothing_;
  torch::Tensor weights_;  // undefined: every class weighs 1
};

}  // namespace

KILN_REGISTER(loss_registry, "cross_entropy", CrossEntropy, CrossEntropyOptions,
              "Softmax cross-entropy of logits [batch, classes] against class indices [batch], "
              "with optional label smoothing and class weights.");

}  // namespace kiln::losses
