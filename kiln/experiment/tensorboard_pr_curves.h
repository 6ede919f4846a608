#pragma once
// TensorBoard's precision-recall curves at each validation, in RUN/tensorboard/val/: one curve
// per class of a classifier (its softmax probability against the rest: `pr_curve/CLASS`, by the
// data's class name where it has them) and one per output of a sigmoid head
// (binary_cross_entropy: `pr_curve` for a single output, `pr_curve/INDEX` for several); a head of
// a multi_head model prefixes its name. Each validation batch's scores are counted into the
// curves' buckets on the batch's device, so watching them waits for nothing; the counts cover
// the batches this process sees. Built in: the `tensorboard:` section switches it.
// Thread-safety: the training thread.

#include <map>
#include <string>
#include <vector>

#include "kiln/core/console.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/objective.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

class TensorBoardPrCurves : public engine::Callback {
 public:
  /// `labels`: the training data's class names (may be empty).
  TensorBoardPrCurves(tensorboard::EventLog& log, std::vector<std::string> labels, Clock clock);
  /// Watches the batches `validation` computes (a stage's validation objective).
  void attach(engine::Objective& validation);

  void on_validation_begin(engine::TrainerView&) override;
  void on_validation_end(engine::TrainerView& view, const engine::MetricValues& values) override;

 private:
  // One head's counts by (curve, bucket), on the batches' device.
  struct Counts {
    torch::Tensor positives, negatives;  // float64 [curves * kPrCurveThresholds]
    bool softmax = false;
  };
  void take(const engine::Objective::HeadOutput& head);
  std::string tag(const std::string& head, int64_t curve, int64_t curves, bool softmax) const;

  tensorboard::EventLog& log_;
  std::vector<std::string> labels_;
  Clock clock_;
  bool active_ = false;
  std::map<std::string, Counts> counts_;  // by head
};

}  // namespace kiln::experiment
