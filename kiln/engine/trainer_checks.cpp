// The checks a training makes before its first step (trainer.h, trainer_checks.h), and the step
// counts its schedules plan with.

#include "kiln/engine/trainer_checks.h"

#include <fmt/format.h>

#include <algorithm>

#include "kiln/data/loader.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/evaluator.h"
#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"
#include "kiln/engine/precision.h"
#include "kiln/optim/hyper_schedules.h"
#include "kiln/optim/optimizer.h"

namespace kiln::engine {
namespace {

// `on_nan: rewind` goes back to a checkpoint of the stage; without a checkpoint callback there is
// none until the stage ends.
void check_rewind(const TrainerParts& parts, const TrainOptions& options) {
  bool checkpoints = std::any_of(parts.callbacks.begin(), parts.callbacks.end(),
                                 [](const Callback* c) { return c->type == "checkpoint"; });
  if (options.on_nan == OnNan::kRewind && !checkpoints)
    throw ConfigError("train.on_nan", "",
                      "rewind goes back to the newest checkpoint of the stage, and without a "
                      "checkpoint callback there is none; add callbacks: [{type: checkpoint, "
                      "every: ...}], or set on_nan: stop or skip_step");
}

}  // namespace

void check_trainer_parts(const TrainerParts& parts, const TrainOptions& options) {
  if (parts.train.batches_per_epoch() == 0)
    throw ConfigError("data.batch_size", "",
                      fmt::format("the training set ({} examples) yields no batch; lower "
                                  "data.batch_size, or set data.drop_last: false",
                                  parts.train.dataset().size()));
  std::vector<std::string> tags =
      monitorable_tags(parts.objective, parts.val != nullptr, parts.loop);
  check_monitor(options.monitor, tags, "train.monitor");
  if (parts.scheduler && !parts.scheduler->monitor().empty())
    check_monitor(parts.scheduler->monitor(), tags, "scheduler.monitor");
  for (const Callback* callback : parts.callbacks) callback->check(options, tags);
  check_rewind(parts, options);
  if (options.profile && options.profile->to < options.profile->from)
    throw ConfigError("train.profile.to", "",
                      fmt::format("{} is before train.profile.from ({}): the window would be empty",
                                  options.profile->to, options.profile->from));
}

std::vector<std::string> monitorable_tags(const Objective& objective, bool has_val,
                                          const Loop* loop) {
  std::vector<std::string> tags;
  for (const std::string split : {"val", "train"}) {
    if (split == "val" && !has_val) continue;
    for (const auto& tag : objective.tags(split)) tags.push_back(tag);
  }
  if (loop && loop->validates_student() && has_val)
    for (const auto& tag : objective.tags("val/student")) tags.push_back(tag);
  if (loop)
    for (const std::string& tag : loop->tags()) tags.push_back(tag);
  return tags;
}

void check_training(const TrainerParts& parts, const TrainOptions& options) {
  check_trainer_parts(parts, options);
  probe_objective(parts.model, parts.train, parts.objective, parts.device);
  // What a Trainer's members check as they are built.
  // fp16 without CUDA is a ConfigError; auto is decided later, always to what the device has.
  if (options.precision != PrecisionMode::kAuto) Precision(options.precision, parts.device);
  if (!parts.schedules.empty())  // its constructor checks the names and the values ahead
    optim::ScheduledHyperParameters(parts.optimizer, parts.schedules,
                                    steps_per_epoch(parts.train, options.accumulate),
                                    planned_steps(options.max, parts.train, options.accumulate));
}

int64_t steps_per_epoch(const data::Loader& train, int64_t accumulate) {
  return (train.batches_per_epoch() + accumulate - 1) / accumulate;
}

int64_t planned_steps(const Period& max, const data::Loader& train, int64_t accumulate) {
  double per_epoch = double(steps_per_epoch(train, accumulate));
  double mean_step = double(train.dataset().size()) / std::max(1.0, per_epoch);
  return max.in_steps(per_epoch, mean_step).value_or(0);  // 0: a time, unknown ahead
}

}  // namespace kiln::engine
