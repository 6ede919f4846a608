#include "kiln/metrics/class_counts.h"

#include <fmt/format.h>

#include "kiln/core/error.h"

namespace kiln::metrics {

void ClassScoreOptions::describe(Schema& s) {
  s.field("average", average,
          "macro: the mean of the per-class scores; micro: the score of the counts summed over "
          "classes.");
  s.field("threshold", threshold,
          "Multi-label outputs: a label is predicted when sigmoid(logit) > threshold.")
      .check([](double t) { return t > 0 && t < 1; }, "in (0, 1)");
}

ClassCountMetric::ClassCountMetric(const ClassScoreOptions& options, const char* name)
    : name_(name), micro_(options.average == ClassAverage::kMicro), threshold_(options.threshold) {}

void ClassCountMetric::reset() {
  multilabel_batches_ = 0;
  tp_.clear();
  fp_.clear();
  fn_.clear();
}

void ClassCountMetric::update(const torch::Tensor& output, const torch::Tensor& target) {
  if (output.dim() == 2 && target.dim() == 1 && output.size(1) > 1) {
    KILN_CHECK(multilabel_batches_ == 0,
               "{}: class indices after multi-label targets; one metric measures one task", name_);
    return count_multiclass(output, target);
  }
  torch::Tensor matched =
      output.dim() == 2 && output.size(1) == 1 && target.dim() == 1 ? target.unsqueeze(1) : target;
  KILN_CHECK(output.dim() == 2 && matched.sizes() == output.sizes(),
             "{} expects scores [batch, classes] with class indices [batch], or logits [batch, "
             "labels] with 0/1 targets of the same shape; got outputs of shape {} and targets "
             "of shape {}",
             name_, shape_of(output), shape_of(target));
  KILN_CHECK(multilabel_batches_ > 0 || tp_.empty(),
             "{}: multi-label targets after class indices; one metric measures one task", name_);
  count_multilabel(output, matched);
}

void ClassCountMetric::count_multiclass(const torch::Tensor& output, const torch::Tensor& target) {
  int64_t classes = output.size(1);
  torch::Tensor truth = target.to(torch::kInt64);
  if (truth.numel() > 0) {
    int64_t low = truth.min().item<int64_t>(), high = truth.max().item<int64_t>();
    KILN_CHECK(low >= 0 && high < classes, "{}: target class {} is out of range for {} classes",
               name_, low < 0 ? low : high, classes);
  }
  torch::Tensor predicted = output.argmax(1);
  torch::Tensor hits = torch::bincount(truth.masked_select(predicted.eq(truth)), {}, classes);
  torch::Tensor predicted_count = torch::bincount(predicted, {}, classes);
  torch::Tensor true_count = torch::bincount(truth, {}, classes);
  add_counts(hits, predicted_count - hits, true_count - hits);
}

void ClassCountMetric::count_multilabel(const torch::Tensor& output, const torch::Tensor& target) {
  torch::Tensor predicted = torch::sigmoid(output) > threshold_;
  torch::Tensor truth = target > 0.5;
  add_counts((predicted & truth).sum(0), (predicted & ~truth).sum(0), (~predicted & truth).sum(0));
  multilabel_batches_ += 1;
}

void ClassCountMetric::add_counts(const torch::Tensor& tp, const torch::Tensor& fp,
                                  const torch::Tensor& fn) {
  // One transfer of the three count vectors, not one per class.
  torch::Tensor all = torch::stack({tp, fp, fn}).to(torch::kCPU, torch::kDouble).contiguous();
  int64_t classes = all.size(1);
  KILN_CHECK(tp_.empty() || int64_t(tp_.size()) == classes,
             "{}: outputs of {} classes after outputs of {}", name_, classes, tp_.size());
  tp_.resize(classes, 0.0);
  fp_.resize(classes, 0.0);
  fn_.resize(classes, 0.0);
  const double* counts = all.data_ptr<double>();
  for (int64_t c = 0; c < classes; ++c) {
    tp_[c] += counts[c];
    fp_[c] += counts[classes + c];
    fn_[c] += counts[2 * classes + c];
  }
}

std::vector<double> ClassCountMetric::sums() const {
  if (tp_.empty()) return {};
  std::vector<double> out{multilabel_batches_};
  for (const auto* counts : {&tp_, &fp_, &fn_})
    out.insert(out.end(), counts->begin(), counts->end());
  return out;
}

void ClassCountMetric::set_sums(const std::vector<double>& sums) {
  reset();
  if (sums.empty()) return;
  KILN_ASSERT(sums.size() % 3 == 1);
  size_t classes = sums.size() / 3;
  multilabel_batches_ = sums[0];
  tp_.assign(sums.begin() + 1, sums.begin() + 1 + classes);
  fp_.assign(sums.begin() + 1 + classes, sums.begin() + 1 + 2 * classes);
  fn_.assign(sums.begin() + 1 + 2 * classes, sums.end());
}

double ClassCountMetric::value() const {
  if (micro_) {
    double tp = 0, fp = 0, fn = 0;
    for (size_t c = 0; c < tp_.size(); ++c) tp += tp_[c], fp += fp_[c], fn += fn_[c];
    return score(tp, fp, fn);
  }
  double total = 0;
  int counted = 0;
  for (size_t c = 0; c < tp_.size(); ++c) {
    bool seen = tp_[c] + fp_[c] + fn_[c] > 0;
    if (!seen && multilabel_batches_ == 0) continue;  // a class neither targeted nor predicted
    total += score(tp_[c], fp_[c], fn_[c]);
    ++counted;
  }
  return counted > 0 ? total / counted : 0.0;
}

std::string ClassCountMetric::tag_name(const std::string& registered) const {
  std::string name = micro_ ? registered + "_micro" : registered;
  if (threshold_ != 0.5) name += fmt::format("_threshold_{}", threshold_);
  return name;
}

}  // namespace kiln::metrics
