#pragma once
// The config's `loop:` built for a run's model (engine/loop.h): what a loop needs beyond the
// trainer's parts (a distillation's teacher, opened from its run) comes from here.
// Thread-safety: the training thread.

#include <memory>
#include <vector>

#include "kiln/engine/loop.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"

namespace kiln::experiment {

/// The loop `experiment`'s config names, attached to `model`, which takes `inputs`; its config
/// errors name `loop` and its keys, or the key of the data or callback that does not fit it.
std::unique_ptr<engine::Loop> build_loop(Experiment& experiment, models::Model& model,
                                         const std::vector<ModelInput>& inputs);

}  // namespace kiln::experiment
