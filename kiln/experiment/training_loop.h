#pragma once
// The config's `loop:` built for a run's model (engine/loop.h): what a loop needs beyond the
// trainer's parts (a distillation's teacher, opened from its run or an export) comes from here.
// Thread-safety: the training thread.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine/loop.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"

namespace kiln::experiment {

/// Opens a frozen model from a kind of folder other than a run (an export's version folder),
/// or nothing when `location` is not of its kind.
using FrozenOpener = std::function<std::optional<engine::FrozenModel>(const std::string& location,
                                                                      torch::Device device)>;
/// Registered by the folder that reads that kind (export/ registers exports, which experiment/
/// cannot include), at start-up as components are; a loop's frozen model (a distillation's
/// teacher) is then a run, a checkpoint or any kind registered.
bool register_frozen_opener(FrozenOpener opener);

/// What a loop kept when its stage ended, for the next stage's loop to take up: a mean
/// teacher's average and its count of updates go on across the stages of a run.
struct LoopCarry {
  std::string type;
  Json state;
  engine::NamedTensors tensors;
};
LoopCarry loop_carry(const engine::Loop& loop);
/// `loop` takes up what the stage before left when it is of the same type (else it starts
/// afresh, as each stage's optimizer does).
void take_up(engine::Loop& loop, const std::optional<LoopCarry>& carried);

/// The loop `experiment`'s config names, attached to `model`, which takes `inputs`; its config
/// errors name `loop` and its keys, or the key of the data or callback that does not fit it.
std::unique_ptr<engine::Loop> build_loop(Experiment& experiment, models::Model& model,
                                         const std::vector<ModelInput>& inputs);

}  // namespace kiln::experiment
