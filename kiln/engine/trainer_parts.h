#pragma once
// What a Trainer works on (its model, optimizer, objective, loaders, callbacks, ...), apart from
// trainer.h so that the checks made before training (trainer_checks.h) need not include the
// trainer itself. Thread-safety: a value of references, read on the training thread.

#include <torch/torch.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/distributed/context.h"
#include "kiln/engine/train_state.h"

namespace kiln::data {
class Loader;
}
namespace kiln::models {
class Model;
}
namespace kiln::optim {
class Scheduler;
}

namespace kiln::engine {

class Callback;
class Loop;
class Objective;
class Regularization;
class StepProfiler;

/// What the trainer works on; all references outlive the trainer.
struct TrainerParts {
  models::Model& model;
  torch::optim::Optimizer& optimizer;
  Objective& objective;  // measured on training batches
  data::Loader& train;
  data::Loader* val = nullptr;  // optional
  torch::Device device = torch::kCPU;
  // A separate instance for validation, so that a validation in the middle of a logging window
  // does not reset the training statistics; required when `val` is given.
  Objective* val_objective = nullptr;
  optim::Scheduler* scheduler = nullptr;  // optional: the optimizer's rates throughout
  std::vector<Callback*> callbacks = {};
  // Where checkpoints are, and the resolved config each one holds; none: no checkpoints.
  std::string checkpoints_dir = "";
  std::string config_yaml = "";
  // Set (to the signal number) by a signal handler: finish the step, save, stop.
  const std::atomic<int>* stop_signal = nullptr;
  // Per-epoch schedules of other optimizer hyper-parameters (`schedules:`), by name.
  std::map<std::string, const optim::Scheduler*> schedules = {};
  // Penalties added to the loss once per step (`regularization:`); optional.
  const Regularization* regularization = nullptr;
  // The train cycle (stages.h) this trainer runs: train.max and the schedule count from its
  // start, the progress logged counts on over the whole run.
  StageMark stage = {};
  // The processes training together; alone by default.
  std::shared_ptr<distributed::Context> context = distributed::single_process();
  // Whether this process saves checkpoints into checkpoints_dir (rank 0 does; the others read
  // them to rewind).
  bool saves_checkpoints = true;
  // What the model takes (open_model.h), saved in every checkpoint; null: nothing saved.
  Json inputs = nullptr;
  // Told of each step's phases (train.profile, kiln bench); optional.
  StepProfiler* profiler = nullptr;
  // What a batch's loss is made of (`loop:`, loop.h); none: the supervised loop.
  Loop* loop = nullptr;
};

}  // namespace kiln::engine
