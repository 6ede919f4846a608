#include "kiln/experiment/tensorboard_histograms.h"

namespace kiln::experiment {

namespace {

tensorboard::Histogram histogram_of(const torch::Tensor& tensor) {
  torch::Tensor values = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  tensorboard::Histogram histogram;
  histogram.add(values.data_ptr<float>(), static_cast<size_t>(values.numel()));
  return histogram;
}

class TensorBoardHistograms : public engine::Callback {
 public:
  TensorBoardHistograms(tensorboard::EventLog& log, Period every, Clock clock)
      : log_(log), every_(every), clock_(std::move(clock)) {
    type = "tensorboard_histograms";
    config_path = "tensorboard.histograms";
  }

  void on_step_end(engine::TrainerView& view, const Progress& before) override {
    if (every_.crossed(before, view.progress())) write(view);
  }

  // A run shorter than the period (or ending between two) still leaves its last weights: one
  // that wrote none at all looked, in TensorBoard, like a run without histograms.
  void on_fit_end(engine::TrainerView& view) override {
    if (view.progress().steps > written_step_) write(view);
  }

 private:
  void write(engine::TrainerView& view) {
    int64_t step = view.progress().steps;
    written_step_ = step;
    double now = clock_();
    for (const auto& item : view.model().named_parameters()) {
      log_.histogram("train", "weights/" + item.key(), step, histogram_of(item.value()), now);
      torch::Tensor gradient = item.value().grad();
      if (gradient.defined())
        log_.histogram("train", "gradients/" + item.key(), step, histogram_of(gradient), now);
    }
    log_.flush();
  }

  tensorboard::EventLog& log_;
  Period every_;
  Clock clock_;
  int64_t written_step_ = 0;
};

}  // namespace

std::unique_ptr<engine::Callback> tensorboard_histograms(tensorboard::EventLog& log, Period every,
                                                         Clock clock) {
  return std::make_unique<TensorBoardHistograms>(log, every, std::move(clock));
}

}  // namespace kiln::experiment
