#pragma once
// Histograms of every parameter and of its gradient for TensorBoard, every
// `tensorboard.histograms_every` and when training ends (unless its last step just wrote them):
// `weights/<name>` and `gradients/<name>` in RUN/tensorboard/train/, at the step they were taken.
// The gradients are those the step just applied (after averaging over processes, unscaling and
// clipping): the trainer clears them only when the next step begins. Built in, not a registered
// callback: the `tensorboard:` section switches it. Thread-safety: the training thread.

#include <memory>

#include "kiln/core/console.h"
#include "kiln/core/period.h"
#include "kiln/engine/callback.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

std::unique_ptr<engine::Callback> tensorboard_histograms(tensorboard::EventLog& log, Period every,
                                                         Clock clock);

}  // namespace kiln::experiment
