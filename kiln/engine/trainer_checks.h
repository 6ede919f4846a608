#pragma once
// What a training checks before its first step: check_trainer_parts (what a Trainer checks of
// its parts as it is built) and check_training (the same and the checks of the Trainer's members,
// ahead of any training); and the step counts its schedules plan with. Thread-safety: the
// training thread.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/period.h"
#include "kiln/engine/train_options.h"
#include "kiln/engine/trainer_parts.h"

namespace kiln::engine {

/// The checks that no member of a Trainer makes: data to train on, what every monitor names,
/// checkpoints for a rewind, a profile window that is not empty.
void check_trainer_parts(const TrainerParts& parts, const TrainOptions& options);

/// What a trainer checks of its config before training, without training: a batch to train on,
/// train.precision on this device, train.monitor, scheduler.monitor, each callback's check and
/// the `schedules:`; a ConfigError naming the key.
void check_training(const TrainerParts& parts, const TrainOptions& options);

/// Optimizer steps per epoch: batches per epoch over `accumulate`, rounded up.
int64_t steps_per_epoch(const data::Loader& train, int64_t accumulate = 1);

/// How many optimizer steps `max` takes over `train` (whose batches per epoch are known), with
/// `accumulate` batches per step; 0 for a time.
int64_t planned_steps(const Period& max, const data::Loader& train, int64_t accumulate = 1);

/// The tags `train.monitor` may name for this experiment, e.g. val/loss, val/accuracy, and the
/// loop's own (train/distillation/loss) when given.
std::vector<std::string> monitorable_tags(const Objective& objective, bool has_val,
                                          const Loop* loop = nullptr);

}  // namespace kiln::engine
