#pragma once
// The built-in TensorBoard callbacks that the `tensorboard:` section switches on (weight and
// gradient histograms, validation images, the embedding projector), made once per run by one
// factory and joined to each stage's callbacks, so the run's wiring has no case for each.
// Thread-safety: the training thread.

#include <memory>
#include <vector>

#include "kiln/engine/callback.h"
#include "kiln/engine/objective.h"
#include "kiln/engine/tensorboard_options.h"
#include "kiln/experiment/tensorboard_images.h"
#include "kiln/experiment/tensorboard_pr_curves.h"
#include "kiln/experiment/tensorboard_projector.h"
#include "kiln/models/model.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

class TensorBoardCallbacks {
 public:
  /// Those `options` switch on, writing into `events`; none when `events` is null (TensorBoard
  /// off, or a process that writes no run folder). `labels`: the data's class names, if any.
  TensorBoardCallbacks(tensorboard::EventLog* events, const engine::TensorBoardOptions& options,
                       const std::vector<std::string>& labels, Clock clock);

  /// Points them at a stage's validation objective and model and adds them to its callbacks.
  void join(std::vector<engine::Callback*>& callbacks, engine::Objective& validation,
            models::Model& model);

 private:
  std::unique_ptr<engine::Callback> histograms_;
  std::unique_ptr<TensorBoardImages> images_;
  std::unique_ptr<TensorBoardPrCurves> pr_curves_;
  std::unique_ptr<TensorBoardProjector> projector_;
};

}  // namespace kiln::experiment
