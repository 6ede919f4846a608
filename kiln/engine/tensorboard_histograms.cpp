#include "kiln/engine/tensorboard_histograms.h"

namespace kiln::engine {
namespace {

tensorboard::Histogram histogram_of(const torch::Tensor& tensor) {
  torch::Tensor values = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  tensorboard::Histogram histogram;
  histogram.add(values.data_ptr<float>(), static_cast<size_t>(values.numel()));
  return histogram;
}

class TensorBoardHistograms : public Callback {
 public:
  TensorBoardHistograms(tensorboard::EventLog& log, Period every, Clock clock)
      : log_(log), every_(every), clock_(std::move(clock)) {
    type = "tensorboard_histograms";
    config_path = "tensorboard.histograms";
  }

  void on_step_end(TrainerView& view, const Progress& before) override {
    if (!every_.crossed(before, view.progress())) return;
    int64_t step = view.progress().steps;
    double now = clock_();
    for (const auto& item : view.model().named_parameters()) {
      log_.histogram("train", "weights/" + item.key(), step, histogram_of(item.value()), now);
      torch::Tensor gradient = item.value().grad();
      if (gradient.defined())
        log_.histogram("train", "gradients/" + item.key(), step, histogram_of(gradient), now);
    }
    log_.flush();
  }

 private:
  tensorboard::EventLog& log_;
  Period every_;
  Clock clock_;
};

}  // namespace

std::unique_ptr<Callback> tensorboard_histograms(tensorboard::EventLog& log, Period every,
                                                 Clock clock) {
  return std::make_unique<TensorBoardHistograms>(log, every, std::move(clock));
}

}  // namespace kiln::engine
