#include "kiln/experiment/tensorboard_callbacks.h"

#include "kiln/experiment/tensorboard_histograms.h"

namespace kiln::experiment {

TensorBoardCallbacks::TensorBoardCallbacks(tensorboard::EventLog* events,
                                           const engine::TensorBoardOptions& options,
                                           const std::vector<std::string>& labels, Clock clock) {
  if (!events) return;
  if (options.histograms)
    histograms_ = tensorboard_histograms(*events, options.histograms_every, clock);
  if (options.images)
    images_ = std::make_unique<TensorBoardImages>(*events, options.max_images, labels, clock);
  if (options.pr_curves) pr_curves_ = std::make_unique<TensorBoardPrCurves>(*events, labels, clock);
  if (options.projector.enabled)
    projector_ =
        std::make_unique<TensorBoardProjector>(events->directory() + "/val", options.projector);
}

void TensorBoardCallbacks::join(std::vector<engine::Callback*>& callbacks,
                                engine::Objective& validation, models::Model& model) {
  if (histograms_) callbacks.push_back(histograms_.get());
  if (images_) {
    images_->attach(validation);
    callbacks.push_back(images_.get());
  }
  if (pr_curves_) {
    pr_curves_->attach(validation);
    callbacks.push_back(pr_curves_.get());
  }
  if (projector_) {
    projector_->attach(validation, model);
    callbacks.push_back(projector_.get());
  }
}

}  // namespace kiln::experiment
