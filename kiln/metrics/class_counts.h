#pragma once
// What precision, recall and f1 share: per-class counts of true positives, false positives and
// false negatives, and their macro or micro average.
//
// Two kinds of task, told apart by the target's shape:
// - multiclass: scores [batch, classes] and class indices [batch]; the prediction is the argmax.
//   A macro average is over the classes that occur among the targets or the predictions, as
//   scikit-learn's (a class never seen in either has no score to average).
// - multi-label: logits [batch, labels] and 0/1 targets of the same shape (or one logit column
//   and [batch] targets: a binary task); a label is predicted when sigmoid(logit) > threshold.
//   A macro average is over every label.
// A score whose denominator is 0 counts as 0 (scikit-learn's zero_division default).
// Thread-safety: as Metric.

#include <string>
#include <vector>

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {

// How per-class scores become one: the mean of the scores, or the score of the summed counts.
enum class ClassAverage { kMacro, kMicro };
inline EnumNameList<ClassAverage> enum_names(ClassAverage) {
  return {{ClassAverage::kMacro, "macro"}, {ClassAverage::kMicro, "micro"}};
}

struct ClassScoreOptions {
  ClassAverage average = ClassAverage::kMacro;
  double threshold = 0.5;
  void describe(Schema& s);
};

/// Per-class counts; a subclass says how a class's score follows from them.
class ClassCountMetric : public Metric {
 public:
  /// `name`: the registry name, for messages.
  ClassCountMetric(const ClassScoreOptions& options, const char* name);
  void reset() override;
  void update(const torch::Tensor& output, const torch::Tensor& target) override;
  /// {multi-label batches, tp per class..., fp per class..., fn per class...}; empty before any
  /// update.
  std::vector<double> sums() const override;
  void set_sums(const std::vector<double>& sums) override;
  double value() const override;
  /// NAME, NAME_micro, and _threshold_T when the threshold is not 0.5.
  std::string tag_name(const std::string& registered) const override;

 protected:
  /// The score of counts `tp`, `fp`, `fn` (of one class, or summed for micro).
  virtual double score(double tp, double fp, double fn) const = 0;

 private:
  void count_multiclass(const torch::Tensor& output, const torch::Tensor& target);
  void count_multilabel(const torch::Tensor& output, const torch::Tensor& target);
  void add_counts(const torch::Tensor& tp, const torch::Tensor& fp, const torch::Tensor& fn);

  /// The counts read back: tp per class, then fp, then fn (an Error for a class out of range).
  std::vector<double> read_counts() const;

  const char* name_;
  bool micro_;
  double threshold_;
  double multilabel_batches_ = 0;  // a sum, so that merged halves still know the kind of task
  DeviceCounts counts_;            // tp per class, then fp, then fn; summed on the batches' device
  DeviceSum outside_;              // rows whose class was out of range, on a device (class_rows.h)
};

/// `numerator / denominator`, or 0 when the denominator is 0.
inline double ratio_or_zero(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

}  // namespace kiln::metrics
