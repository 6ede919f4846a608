#include "kiln/metrics/class_counts.h"

#include <fmt/format.h>

#include "kiln/core/error.h"
#include "kiln/metrics/class_rows.h"

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
  counts_.reset();
  outside_.reset();
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
  KILN_CHECK(multilabel_batches_ > 0 || counts_.size() == 0,
             "{}: multi-label targets after class indices; one metric measures one task", name_);
  count_multilabel(output, matched);
}

void ClassCountMetric::count_multiclass(const torch::Tensor& output, const torch::Tensor& target) {
  int64_t classes = output.size(1);
  ClassRows rows = class_rows(target, classes, name_, outside_);
  torch::Tensor predicted = output.argmax(1);
  torch::Tensor hits = counted(rows.index, rows.weight * predicted.eq(rows.index), classes);
  torch::Tensor predicted_count = counted(predicted, rows.weight, classes);
  torch::Tensor true_count = counted(rows.index, rows.weight, classes);
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
  int64_t classes = tp.size(0);
  KILN_CHECK(counts_.size() == 0 || counts_.size() == 3 * classes,
             "{}: outputs of {} classes after outputs of {}", name_, classes, counts_.size() / 3);
  counts_.add(torch::cat({tp, fp, fn}));  // added on the device, read when the metric is
}

std::vector<double> ClassCountMetric::read_counts() const {
  refuse_outside(outside_, counts_.size() / 3, name_);
  return counts_.read();
}

std::vector<double> ClassCountMetric::sums() const {
  if (counts_.size() == 0) return {};
  std::vector<double> out{multilabel_batches_};
  std::vector<double> counts = read_counts();
  out.insert(out.end(), counts.begin(), counts.end());
  return out;
}

void ClassCountMetric::set_sums(const std::vector<double>& sums) {
  reset();
  if (sums.empty()) return;
  KILN_ASSERT(sums.size() % 3 == 1);
  multilabel_batches_ = sums[0];
  counts_.set(std::vector<double>(sums.begin() + 1, sums.end()));
}

double ClassCountMetric::value() const {
  std::vector<double> counts = read_counts();
  size_t classes = counts.size() / 3;
  const double *tp = counts.data(), *fp = tp + classes, *fn = fp + classes;
  if (micro_) {
    double tp_all = 0, fp_all = 0, fn_all = 0;
    for (size_t c = 0; c < classes; ++c) tp_all += tp[c], fp_all += fp[c], fn_all += fn[c];
    return score(tp_all, fp_all, fn_all);
  }
  double total = 0;
  int scored = 0;
  for (size_t c = 0; c < classes; ++c) {
    bool seen = tp[c] + fp[c] + fn[c] > 0;
    if (!seen && multilabel_batches_ == 0) continue;  // a class neither targeted nor predicted
    total += score(tp[c], fp[c], fn[c]);
    ++scored;
  }
  return scored > 0 ? total / scored : 0.0;
}

std::string ClassCountMetric::tag_name(const std::string& registered) const {
  std::string name = micro_ ? registered + "_micro" : registered;
  if (threshold_ != 0.5) name += fmt::format("_threshold_{}", threshold_);
  return name;
}

}  // namespace kiln::metrics
