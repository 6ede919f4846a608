// One optimizer step of the trainer: forward and backward of each batch of the group (with
// autocast, loss scaling and the regularization penalty), then clipping, the NaN/Inf policies
// (stop, skip_step, rewind), the schedules and the update.

#include <cmath>
#include <filesystem>

#include "kiln/engine/trainer.h"
#include "kiln/engine/trainer_window.h"
#include "kiln/optim/gradients.h"

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
  if (group.batches == 0) clear_gradients();
  torch::Tensor loss;
  double started = clock_();
  if (batch.size() == 0) {
    // Every row refused (streamed records with on_corrupt: skip): the batch adds nothing, but its
    // backward still runs, so that the ranks' gradient reductions stay in step.
    loss = torch::zeros({}, torch::TensorOptions().device(parts_.device));
    for (const torch::Tensor& parameter : trainable_) loss = loss + parameter.sum() * 0;
  } else {
    Precision::Autocast autocast = precision_.autocast();
    loss = loop_->batch_loss(parts_.model, parts_.objective, on_device(batch, parts_.device));
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
  double backward_done = clock_();
  group.forward += forward_done - started;
  group.backward += backward_done - forward_done;
  profile("forward", started, forward_done);
  profile("backward", forward_done, backward_done);
  if (parts_.profiler) parts_.profiler->batch_done();
  group.batches += 1;
  if (batch.size() == 0) return;  // no loss to count
  // Added up on the device; read when the device gets there (settle_through).
  torch::Tensor value = loop_->counted_loss(parts_.objective);
  group.loss = group.loss_batches == 0 ? value : group.loss + value;
  group.loss_batches += 1;
  // The job's samples: every rank's batch is as large as this one (equal shards).
  group.samples += batch.size() * parts_.context->world_size();
}

namespace {

// What a step posts to DeviceReadings: its mean loss, then its gradient norm, each when it has one.
enum StepValues : unsigned { kLoss = 1, kNorm = 2 };

torch::Tensor as_float(const torch::Tensor& tensor) {
  return tensor.scalar_type() == torch::kFloat ? tensor : tensor.to(torch::kFloat);
}

// A host read of a device value: only where the step must decide before its update.
bool finite_on_host(const torch::Tensor& value) {
  return !value.defined() || std::isfinite(value.item<double>());
}

}  // namespace

bool Trainer::checks_before_update() const {
  return options_.on_nan == OnNan::kSkipStep || precision_.scales_loss() ||
         parts_.context->world_size() > 1;
}

void Trainer::post_step_values(const torch::Tensor& loss, const torch::Tensor& norm) {
  std::vector<torch::Tensor> values;
  unsigned layout = 0;
  if (loss.defined()) {
    values.push_back(as_float(loss).reshape({1}));
    layout |= kLoss;
  }
  if (norm.defined()) {
    values.push_back(as_float(norm).reshape({1}));
    layout |= kNorm;
  }
  if (values.empty()) return;
  readings_.post(progress_.steps + 1, values.size() == 1 ? values[0] : torch::cat(values), layout);
}

Trainer::StepOutcome Trainer::settle_through(int64_t step, Window& window) {
  for (const DeviceReadings::Reading& reading : readings_.take_through(step)) {
    size_t next = 0;
    double loss = reading.layout & kLoss ? reading.values[next++] : 0.0;
    double norm = reading.layout & kNorm ? reading.values[next++] : 0.0;
    StepOutcome outcome = StepOutcome::kStepped;
    if (!std::isfinite(loss))
      outcome = on_non_finite(
          fmt::format("training loss became {} at step {}", number_text(loss), reading.step));
    else if (!std::isfinite(norm))
      outcome = on_non_finite(
          fmt::format("gradient norm became {} at step {}", number_text(norm), reading.step));
    if (outcome != StepOutcome::kStepped) {
      readings_.clear();  // later steps built on this one: a rewind abandons them
      return outcome;
    }
    if (reading.layout & kNorm) {
      window.grad_norm_sum += norm;
      window.norms += 1;
    }
    if (reading.layout & kLoss)
      smoothed_loss_ = smoothed_loss_ < 0 ? loss : 0.95 * smoothed_loss_ + 0.05 * loss;
  }
  return StepOutcome::kStepped;
}

void Trainer::clear_gradients() {
  // To none, as PyTorch's zero_grad() does by default: the next backward then stores its
  // gradients rather than adding them to zeros (no launches to zero them, none to add).
  for (torch::Tensor& parameter : trainable_) parameter.mutable_grad().reset();
}

bool Trainer::exchange_gradients(const torch::Tensor& loss, Window& window, double& started) {
  // Once per optimizer step, after the group's last backward: every process's mean gradient.
  // With it, whether any process's loss was not finite: then they decide together, now. Alone,
  // nothing is read (a context of one may still finish what prepare_gradient_reduction began).
  if (parts_.context->world_size() == 1)
    return !parts_.context->reduce_gradients(trainable_, false);
  bool others_finite = !parts_.context->reduce_gradients(trainable_, !finite_on_host(loss));
  double reduced = clock_();
  window.communication += reduced - started;
  profile("communication", started, reduced);
  started = reduced;
  return others_finite;
}

Trainer::StepOutcome Trainer::optimizer_step(const Group& group, Window& window) {
  window.forward += group.forward;
  window.backward += group.backward;
  double started = clock_();
  // Rows all refused (on_corrupt: skip): a step without an update, so that steps and epochs keep
  // counting batches. Ranks reduce together, what any of them holds.
  if (group.samples == 0 && parts_.context->world_size() == 1) {
    clear_gradients();
    return StepOutcome::kSkipped;
  }
  // train.on_nan's stop and rewind act on a step's values at the next step, by when the device
  // has usually got there: the host never waits for this step's.
  if (!checks_before_update()) {
    StepOutcome before = settle_through(progress_.steps, window);
    if (before != StepOutcome::kStepped) return before;
  }
  torch::Tensor loss =
      group.loss_batches > 1 ? group.loss / double(group.loss_batches) : group.loss;
  bool others_finite = exchange_gradients(loss, window, started);
  // Taken after the exchange: a parameter that had no gradient here gets one when another had.
  std::vector<torch::Tensor> gradients = optim::gradients_of(trainable_);
  bool scaled_finite = precision_.unscale(gradients);
  torch::Tensor norm = optim::clip_gradients(gradients, options_.clip_norm, options_.clip_value);
  if (precision_.scales_loss()) {
    precision_.update(scaled_finite);
    // An fp16 overflow with a finite loss is the loss scale's business, not a NaN: skip quietly.
    if (!scaled_finite && others_finite && finite_on_host(loss)) {
      clear_gradients();
      return StepOutcome::kSkipped;
    }
  }
  if (!others_finite && finite_on_host(loss))
    return on_non_finite(fmt::format("another process's training loss was not finite at step {}",
                                     progress_.steps + 1));
  post_step_values(loss, norm);
  if (checks_before_update()) {
    StepOutcome now = settle_through(progress_.steps + 1, window);
    if (now != StepOutcome::kStepped) return now;
  }
  // A schedule spans its stage: it sees the steps since the stage began.
  int64_t stage_steps = stage_progress().steps;
  learning_rates_->apply(stage_steps, lr_multiplier_);
  if (hyper_parameters_) hyper_parameters_->apply(stage_steps);
  parts_.optimizer.step();
  loop_->after_update(parts_.model);
  // Clipping and schedules count as the update too.
  double stepped = clock_();
  window.optimizer += stepped - started;
  profile("optimizer", started, stepped);
  skipped_in_a_row_ = 0;
  if (group.penalty.defined()) {
    torch::Tensor penalty = group.penalty.detach();
    window.penalty_sum = window.penalty_sum.defined() ? window.penalty_sum + penalty : penalty;
  }
  window.updates += 1;
  return StepOutcome::kStepped;
}

Trainer::StepOutcome Trainer::on_non_finite(const std::string& what) {
  clear_gradients();
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
  readings_.clear();
  record({{"train/rewinds", double(rewinds_)}});
  console_.line(fmt::format("{}; rewound to {} (step {}); learning rates now x{}", what, checkpoint,
                            progress_.steps, lr_multiplier_));
}

}  // namespace kiln::engine
