// cross_entropy: softmax cross-entropy between logits and class indices, optionally with label
// smoothing (Szegedy et al.) and per-class weights for unbalanced classes.

#include <mutex>
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
    for (double weight : o.class_weights) host_weights_.push_back(float(weight));
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
      options.weight(weights_on(output.device(), output.scalar_type()));
    }
    return torch::nn::functional::cross_entropy(output, target, options);
  }
  // Reads the targets element by element in host memory (the objective hands over the loader's
  // copy): no operator is dispatched, so a step on a GPU waits for nothing here.
  std::optional<BadTarget> check_targets(const torch::Tensor& output,
                                         const torch::Tensor& target) const override {
    if (output.dim() != 2 || target.dim() != 1 || target.is_floating_point()) return std::nullopt;
    int64_t classes = output.size(1);
    // A caller without a host copy: look on the device first, and copy only a bad batch.
    if (!target.is_cpu() && !((target < 0) | (target >= classes)).any().item<bool>())
      return std::nullopt;
    torch::Tensor indices = host_indices(target.cpu());
    const int64_t* index = indices.data_ptr<int64_t>();
    for (int64_t row = 0; row < indices.numel(); ++row)
      if (index[row] < 0 || index[row] >= classes)
        return BadTarget{row, fmt::format("class {} is outside the model's {} classes (0 to {})",
                                          index[row], classes, classes - 1)};
    return std::nullopt;
  }
  // torch divides a weighted mean (its label-smoothing term too) by the targets' weights.
  double mean_weight(const torch::Tensor& output, const torch::Tensor& target) const override {
    if (!weights_.defined()) return Loss::mean_weight(output, target);
    if (!target.is_cpu())  // a caller without a host copy: read the device
      return weights_.index_select(0, target.to(torch::kCPU, torch::kInt64)).sum().item<double>();
    torch::Tensor indices = host_indices(target);
    const int64_t* index = indices.data_ptr<int64_t>();
    double total = 0;
    for (int64_t row = 0; row < indices.numel(); ++row) total += host_weights_.at(index[row]);
    return total;
  }
  Scores scores() const override { return Scores::kSoftmax; }

 private:
  // Class indices as int64, contiguous: `target` itself when it already is.
  static torch::Tensor host_indices(const torch::Tensor& target) {
    return target.scalar_type() == torch::kInt64 && target.is_contiguous()
               ? target
               : target.to(torch::kInt64).contiguous();
  }

  // The class weights on `device` in `dtype`, copied there once: a copy from host memory every
  // step would make the host wait for it.
  torch::Tensor weights_on(torch::Device device, torch::Dtype dtype) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!placed_.defined() || placed_.device() != device || placed_.scalar_type() != dtype)
      placed_ = weights_.to(device, dtype);
    return placed_;
  }

  double label_smoothing_;
  torch::Tensor weights_;  // undefined: every class weighs 1
  std::vector<float> host_weights_;
  mutable std::mutex mutex_;
  mutable torch::Tensor placed_;  // weights_ on the device and in the dtype last asked for
};

}  // namespace

KILN_REGISTER(loss_registry, "cross_entropy", CrossEntropy, CrossEntropyOptions,
              "Softmax cross-entropy of logits [batch, classes] against class indices [batch], "
              "with optional label smoothing and class weights.");

}  // namespace kiln::losses
