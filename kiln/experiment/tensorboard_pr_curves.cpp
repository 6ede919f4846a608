#include "kiln/experiment/tensorboard_pr_curves.h"

#include "kiln/tensorboard/pr_curve.h"

namespace kiln::experiment {

namespace {

using Scores = losses::Loss::Scores;
using tensorboard::kPrCurveThresholds;

constexpr int64_t kMostCurves = 100;  // per head: more would not be looked at one by one

// A batch's scores [N, curves] in [0, 1] and whether each counts as a positive or a negative of
// its curve ([N, curves] each); undefined scores when the head's output is not one of a
// classifier's.
struct Scored {
  torch::Tensor scores, positive, negative;
};

Scored scored(const engine::Objective::HeadOutput& head) {
  const torch::Tensor &output = head.output, &target = head.target;
  if (!target.defined() || output.dim() < 1 || output.size(0) == 0) return {};
  int64_t rows = output.size(0);
  if (head.scores == Scores::kSoftmax) {
    if (output.dim() != 2 || target.dim() != 1 || target.is_floating_point() ||
        target.size(0) != rows)
      return {};
    int64_t classes = output.size(1);
    // A row whose class is outside the outputs' (an ignored index) is no example of any curve.
    torch::Tensor known = ((target >= 0) & (target < classes)).unsqueeze(1);
    torch::Tensor truth =
        torch::one_hot(target.clamp(0, classes - 1).to(torch::kLong), classes).to(torch::kBool);
    return {torch::softmax(output.detach().to(torch::kFloat32), 1), truth & known, ~truth & known};
  }
  // A [batch] target fits a [batch, 1] output, as the loss takes it.
  if (head.scores == Scores::kSigmoid && target.numel() == output.numel() && target.dim() > 0 &&
      target.size(0) == rows) {
    torch::Tensor truth = (target.reshape({rows, -1}) > 0.5);
    return {torch::sigmoid(output.detach().to(torch::kFloat32)).reshape({rows, -1}), truth, ~truth};
  }
  return {};
}

}  // namespace

TensorBoardPrCurves::TensorBoardPrCurves(tensorboard::EventLog& log,
                                         std::vector<std::string> labels, Clock clock)
    : log_(log), labels_(std::move(labels)), clock_(std::move(clock)) {
  type = "tensorboard_pr_curves";
  config_path = "tensorboard.pr_curves";
}

void TensorBoardPrCurves::attach(engine::Objective& validation) {
  validation.observe_outputs([this](const data::Batch&, const engine::Objective::HeadOutput& head) {
    if (active_) take(head);
  });
}

void TensorBoardPrCurves::on_validation_begin(engine::TrainerView&) {
  active_ = true;
  counts_.clear();
}

void TensorBoardPrCurves::take(const engine::Objective::HeadOutput& head) {
  torch::NoGradGuard no_gradients;
  Scored batch = scored(head);
  if (!batch.scores.defined() || batch.scores.size(1) > kMostCurves) return;
  int64_t curves = batch.scores.size(1);
  auto options = batch.scores.options().dtype(torch::kFloat64);
  Counts& counts = counts_[head.head];
  if (!counts.positives.defined() || counts.positives.numel() != curves * kPrCurveThresholds) {
    counts = {torch::zeros({curves * kPrCurveThresholds}, options),
              torch::zeros({curves * kPrCurveThresholds}, options),
              head.scores == Scores::kSoftmax};
  }
  // Bucket floor(score * (n - 1)) of each score's own curve; a NaN score counts as 0.
  torch::Tensor bucket = (batch.scores.nan_to_num(0.0).clamp(0, 1) * (kPrCurveThresholds - 1))
                             .floor()
                             .to(torch::kLong);
  torch::Tensor index =
      (bucket + torch::arange(curves, bucket.options()) * kPrCurveThresholds).flatten();
  counts.positives.index_add_(0, index, batch.positive.flatten().to(torch::kFloat64));
  counts.negatives.index_add_(0, index, batch.negative.flatten().to(torch::kFloat64));
}

std::string TensorBoardPrCurves::tag(const std::string& head, int64_t curve, int64_t curves,
                                     bool softmax) const {
  std::string tag = head.empty() ? "pr_curve" : head + "/pr_curve";
  if (!softmax && curves == 1) return tag;
  bool named = softmax && head.empty() && int64_t(labels_.size()) == curves;
  return tag + "/" + (named ? labels_[size_t(curve)] : std::to_string(curve));
}

void TensorBoardPrCurves::on_validation_end(engine::TrainerView& view,
                                            const engine::MetricValues&) {
  active_ = false;
  int64_t step = view.progress().steps;
  double now = clock_();
  for (const auto& [head, counts] : counts_) {
    torch::Tensor positives = counts.positives.cpu().contiguous(),
                  negatives = counts.negatives.cpu().contiguous();
    int64_t curves = positives.numel() / kPrCurveThresholds;
    for (int64_t curve = 0; curve < curves; ++curve) {
      const double* p = positives.data_ptr<double>() + curve * kPrCurveThresholds;
      const double* n = negatives.data_ptr<double>() + curve * kPrCurveThresholds;
      tensorboard::PrCurveCounts curve_counts{{p, p + kPrCurveThresholds},
                                              {n, n + kPrCurveThresholds}};
      log_.pr_curve("val", tag(head, curve, curves, counts.softmax), step, curve_counts, now);
    }
  }
  log_.flush();
}

}  // namespace kiln::experiment
