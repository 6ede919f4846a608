#pragma once
// What a Trainer checks of its parts as it is built, shared with check_training (trainer.h),
// which makes the same checks and those of the Trainer's members ahead of any training.
// Thread-safety: the training thread.

#include "kiln/engine/trainer.h"

namespace kiln::engine {

/// The checks that no member of a Trainer makes: data to train on, what every monitor names,
/// checkpoints for a rewind, a profile window that is not empty.
void check_trainer_parts(const TrainerParts& parts, const TrainOptions& options);

}  // namespace kiln::engine
