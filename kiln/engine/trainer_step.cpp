// One optimizer step of the trainer: forward and backward of each batch of the group (with
// autocast, loss scaling and the regularization penalty), then clipping, the NaN/Inf policies
// (stop, skip_step, rewind), the schedules and the update.

#include <cmath>
#include <filesystem>

#include "kiln/engine/gradients.h"
#include "kiln/engine/trainer.h"
#include "kiln/engine/trainer_window.h"

namespace kiln::engine {
namespace {

constexpr int64_t kMaxSkipsInARow = 10;
constexpr int64_t kMaxRewinds = 5;

std::string number_text(double value) {
  // A NaN's sign bit is an accident of the arithmetic; printing "-nan" would only confuse.
  return std::isnan(value) ? std::string("nan") : fmt::format("{}", value);
}

}  // namespace

void Trainer::accumulate_batch(const data::Batch& batch, Group& group) {
  // Cleared as a step begins, not after the last one: callbacks at its end (histograms) see the
  // gradients it applied.
  if (group.batches == 0) parts_.optimizer.zero_grad();
  torch::Tensor loss;
  double started = clock_();
  if (batch.size() == 0) {
    // Every row refused (streamed records with on_corrupt: skip): the batch adds nothing, but its
    // backward still runs, so that the ranks' gradient reductions stay in step.
    loss = torch::zeros({}, torch::TensorOptions().device(parts_.device));
    for (const torch::Tensor& parameter : trainable_) loss = loss + parameter.sum() * 0;
  } else {
    Precision::Autocast autocast = precision_.autocast();
    loss = parts_.objective.compute(parts_.model, on_device(batch, parts_.device));
  }
  // Each batch's mean loss counts 1/size of the step, so the step follows the group's mean.
  if (group.size > 1) loss = loss / double(group.size);
  // Once per step, whatever the accumulation; outside autocast, in the weights' precision.
  if (parts_.regularization && group.batches == 0) {
    group.penalty = parts_.regularization->penalty();
    loss = loss + group.penalty;
  }
  double forward_done = clock_();
  // The step's last backward: the ranks average its gradients while it runs.
  if (group.batches + 1 == group.size) parts_.context->prepare_gradient_reduction(trainable_);
  precision_.scale(loss).backward();
  bool has_rows = batch.size() > 0;
  double value = has_rows ? parts_.objective.last_loss() : 0;
  double backward_done = clock_();
  group.forward += forward_done - started;
  group.backward += backward_done - forward_done;
  profile("forward", started, forward_done);
  profile("backward", forward_done, backward_done);
  if (parts_.profiler) parts_.profiler->batch_done();
  group.batches += 1;
  if (!has_rows) return;  // no loss to count
  if (group.finite) group.loss = value;
  group.finite = group.finite && std::isfinite(value);
  // The job's samples: every rank's batch is as large as this one (equal shards).
  group.samples += batch.size() * parts_.context->world_size();
  if (std::isfinite(value))
    smoothed_loss_ = smoothed_loss_ < 0 ? value : 0.95 * smoothed_loss_ + 0.05 * value;
}

Trainer::StepOutcome Trainer::optimizer_step(const Group& group, Window& window) {
  window.forward += group.forward;
  window.backward += group.backward;
  double started = clock_();
  // Rows all refused (on_corrupt: skip): a step without an update, so that steps and epochs keep
  // counting batches. Ranks reduce together, what any of them holds.
  if (group.samples == 0 && parts_.context->world_size() == 1) {
    parts_.optimizer.zero_grad();
    return StepOutcome::kSkipped;
  }
  // Once per optimizer step, after the group's last backward: every process's mean gradient.
  // With it, whether any process's loss was not finite: then it is not finite for all, and they
  // skip, stop or rewind together.
  bool finite = !parts_.context->reduce_gradients(trainable_, !group.finite);
  // Taken after the exchange: a parameter that had no gradient here gets one when another had.
  std::vector<torch::Tensor> gradients = gradients_of(trainable_);
  if (parts_.context->world_size() > 1) {
    double reduced = clock_();
    window.communication += reduced - started;
    profile("communication", started, reduced);
    started = reduced;
  }
  bool scaled_finite = precision_.unscale(gradients);
  double norm = clip_gradients(gradients, options_.clip_norm, options_.clip_value);
  if (precision_.scales_loss()) {
    precision_.update(scaled_finite);
    // An fp16 overflow with a finite loss is the loss scale's business, not a NaN: skip quietly.
    if (!scaled_finite && finite) {
      parts_.optimizer.zero_grad();
      return StepOutcome::kSkipped;
    }
  }
  if (!finite && group.finite)
    return on_non_finite(fmt::format("another process's training loss was not finite at step {}",
                                     progress_.steps + 1));
  if (!finite)
    return on_non_finite(fmt::format("training loss became {} at step {}", number_text(group.loss),
                                     progress_.steps + 1));
  if (!std::isfinite(norm))
    return on_non_finite(
        fmt::format("gradient norm became {} at step {}", number_text(norm), progress_.steps + 1));
  // A schedule spans its stage: it sees the steps since the stage began.
  int64_t stage_steps = stage_progress().steps;
  learning_rates_->apply(stage_steps, lr_multiplier_);
  if (hyper_parameters_) hyper_parameters_->apply(stage_steps);
  parts_.optimizer.step();
  // Clipping and schedules count as the update too.
  double stepped = clock_();
  window.optimizer += stepped - started;
  profile("optimizer", started, stepped);
  skipped_in_a_row_ = 0;
  window.grad_norm_sum += norm;
  if (group.penalty.defined()) {
    torch::Tensor penalty = group.penalty.detach();
    window.penalty_sum = window.penalty_sum.defined() ? window.penalty_sum + penalty : penalty;
  }
  window.updates += 1;
  return StepOutcome::kStepped;
}

Trainer::StepOutcome Trainer::on_non_finite(const std::string& what) {
  parts_.optimizer.zero_grad();
  if (options_.on_nan == OnNan::kStop)
    throw Error(what +
                "; lower optimizer.lr, clip gradients (train.clip_norm), or set train.on_nan: "
                "skip_step or rewind");
  if (options_.on_nan == OnNan::kRewind) {
    rewind(what);
    return StepOutcome::kRewound;
  }
  if (++skipped_in_a_row_ > kMaxSkipsInARow)
    throw Error(fmt::format("{}; {} steps in a row were not finite (train.on_nan: skip_step)", what,
                            kMaxSkipsInARow + 1));
  skipped_steps_ += 1;  // logged with the step's training values (log_training)
  console_.line(what + "; skipped that step (train.on_nan: skip_step)");
  return StepOutcome::kSkipped;
}

std::string Trainer::checkpoint_to_rewind_to(const std::string& what) {
  // Rank 0 writes the checkpoints and repairs an interrupted one as it looks: it chooses, and
  // tells the other processes, so that all go back to the same step.
  std::string checkpoint, problem = "rank 0 found none";
  if (parts_.context->rank() == 0) {
    std::vector<std::string> warnings;
    try {
      checkpoint = find_checkpoint(
          std::filesystem::path(parts_.checkpoints_dir).parent_path().string(), "last", &warnings);
    } catch (const Error& e) {
      problem = e.what();
    }
    for (const auto& warning : warnings) console_.line("warning: " + warning);
  }
  checkpoint = parts_.context->broadcast(checkpoint);
  if (checkpoint.empty()) throw Error(what + "; no checkpoint to rewind to yet (" + problem + ")");
  return checkpoint;
}

void Trainer::rewind(const std::string& what) {
  if (rewinds_ >= kMaxRewinds)
    throw Error(fmt::format("{}; gave up after {} rewinds (train.on_nan: rewind)", what, rewinds_));
  if (parts_.checkpoints_dir.empty())
    throw Error(what + "; train.on_nan: rewind needs checkpoints to go back to");
  std::string checkpoint = checkpoint_to_rewind_to(what);
  TrainState state = read_train_state(checkpoint);
  // An earlier stage's checkpoint holds another optimizer's state and other callbacks'.
  if (state.stage.index != parts_.stage.index)
    throw Error(fmt::format(
        "{}; no checkpoint of stage {} to rewind to yet (the newest, {}, was taken in stage {}); "
        "checkpoint more often (the checkpoint callback's `every`)",
        what, parts_.stage.index + 1, checkpoint, state.stage.index + 1));
  double multiplier = lr_multiplier_ * 0.5;
  int64_t rewinds = rewinds_ + 1;
  resume(state, checkpoint);
  lr_multiplier_ = multiplier;
  rewinds_ = rewinds;
  parts_.objective.reset();
  record({{"train/rewinds", double(rewinds_)}});
  console_.line(fmt::format("{}; rewound to {} (step {}); learning rates now x{}", what, checkpoint,
                            progress_.steps, lr_multiplier_));
}

}  // namespace kiln::engine
