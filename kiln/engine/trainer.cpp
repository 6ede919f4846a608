#include "kiln/engine/trainer.h"

#include <cmath>
#include <filesystem>

#include "kiln/core/peak_memory.h"
#include "kiln/engine/cuda_device.h"
#include "kiln/engine/trainer_checks.h"
#include "kiln/engine/trainer_window.h"
#include "kiln/optim/optimizer.h"

namespace kiln::engine {
namespace {

// Where the window's training time went, as shares of it: waiting for data, forward, backward,
// the update and the callbacks; the rest is logging and the loop itself. On a GPU, forward and
// backward return once their kernels are queued, so their time shows up where the host next
// waits for the device (the loss's value, the update).
void add_time_shares(const std::map<std::string, double>& seconds, double elapsed,
                     MetricValues& values) {
  for (const auto& [part, spent] : seconds)
    values["train/time/" + part] = elapsed > 0 ? spent / elapsed : 0.0;
}

// The learning rates of a run without a `scheduler`: the configured ones, throughout.
class NoSchedule : public optim::Scheduler {
 public:
  double factor(int64_t) const override { return 1.0; }
};

const optim::Scheduler& no_schedule() {
  static const NoSchedule none;
  return none;
}

}  // namespace

Trainer::Trainer(TrainerParts parts, const TrainOptions& options, MetricSink& metrics,
                 Console& console, Clock clock)
    : parts_(parts),
      own_loop_(parts.loop ? nullptr : supervised_loop()),
      loop_(parts.loop ? parts.loop : own_loop_.get()),
      options_(options),
      metrics_(metrics),
      console_(console),
      clock_(std::move(clock)),
      precision_(options.precision, parts.device),
      readings_(parts.device) {
  KILN_ASSERT(parts_.val == nullptr || parts_.val_objective != nullptr);
  check_trainer_parts(parts_, options_);  // precision_ and hyper_parameters_ check the rest
  learning_rates_.emplace(parts_.optimizer, parts_.scheduler ? *parts_.scheduler : no_schedule());
  for (const auto& group : parts_.optimizer.param_groups())
    for (const auto& parameter : group.params()) trainable_.push_back(parameter);
  if (!parts_.schedules.empty())
    hyper_parameters_.emplace(parts_.optimizer, parts_.schedules,
                              steps_per_epoch(parts_.train, options_.accumulate),
                              planned_steps(options_.max, parts_.train, options_.accumulate));
  progress_ = parts_.stage.start;
}

void Trainer::continue_from(const TrainResult& previous) {
  progress_ = previous.progress;
  validated_ = true;  // the previous stage ended with a validation
  result_.best = previous.best;
  result_.last = previous.last;
  saved_step_ = progress_.steps;  // its final checkpoint holds these weights
  result_.checkpoint = previous.checkpoint;
}

Progress Trainer::stage_progress() const {
  const Progress& start = parts_.stage.start;
  return {progress_.steps - start.steps, progress_.epochs - start.epochs,
          progress_.samples - start.samples, progress_.seconds - start.seconds};
}

bool Trainer::after_step(const Progress& before, Window& window) {
  // Callbacks first (an EMA is then current for the validation), the checkpoint last (it then
  // holds this step's validation values and every callback's state after this step).
  double started = clock_();
  for (Callback* callback : parts_.callbacks) callback->on_step_end(*this, before);
  double called = clock_();
  window.callbacks += called - started;
  profile("callbacks", started, called);
  // Periods in time pass on each process's own clock: all log and validate when any is due, as
  // both meet the other processes (statistics are combined). The stop votes go with them: when
  // neither is due, nothing can change them before should_stop().
  std::optional<std::string> reason;
  std::vector<double> due = {options_.log_every.crossed(before, progress_) ? 1.0 : 0.0,
                             options_.validate_every.crossed(before, progress_) ? 1.0 : 0.0};
  std::vector<double> votes = stop_votes(reason);
  due.insert(due.end(), votes.begin(), votes.end());
  parts_.context->all_reduce(due, distributed::ReduceOp::kMax);
  if (due[0] == 0 && due[1] == 0) step_votes_ = StopVotes{{due.begin() + 2, due.end()}, reason};
  // What is logged, validated or saved must be sound: the steps' values are read first, and a
  // NaN among them is acted on before (a rewind abandons this step's work).
  if (due[0] > 0 || due[1] > 0 || checkpoint_requested_) {
    if (settle_through(progress_.steps, window) == StepOutcome::kRewound) {
      step_votes_.reset();
      return true;
    }
  }
  if (due[0] > 0) log_training(window);
  validated_ = due[1] > 0;
  if (validated_) {
    double validation_start = clock_();
    validate();
    double validated = clock_();
    window.started += validated - validation_start;  // throughput counts training time only
    profile("validation", validation_start, validated);
  }
  if (checkpoint_requested_) {
    double saving = clock_();
    save_checkpoint();
    profile("checkpoint", saving, clock_());
  }
  if (parts_.profiler) parts_.profiler->step_ends();
  return false;
}

bool Trainer::should_stop() {
  // This process's reasons, then every process's: a stop anywhere is a stop everywhere, so that
  // no process waits for the others at a step they will not take.
  if (step_votes_) {
    StopVotes taken = std::move(*step_votes_);
    step_votes_.reset();
    return count_stop_votes(taken.votes, taken.reason);
  }
  std::optional<std::string> reason;
  std::vector<double> votes = stop_votes(reason);
  parts_.context->all_reduce(votes, distributed::ReduceOp::kMax);
  return count_stop_votes(votes, reason);
}

std::vector<double> Trainer::stop_votes(std::optional<std::string>& reason) const {
  for (Callback* callback : parts_.callbacks)
    if (!reason) reason = callback->should_stop();
  if (!reason) reason = reached_stop_at();
  int signal = parts_.stop_signal ? parts_.stop_signal->load() : 0;
  return {double(signal), reason ? 1.0 : 0.0, options_.max.reached(stage_progress()) ? 1.0 : 0.0};
}

bool Trainer::count_stop_votes(const std::vector<double>& votes,
                               const std::optional<std::string>& reason) {
  if (votes[0] > 0) {
    result_.stopped_by_signal = static_cast<int>(votes[0]);
    int signal = parts_.stop_signal ? parts_.stop_signal->load() : 0;
    console_.line(fmt::format("stopping at step {}: {} signal {}", progress_.steps,
                              signal ? "received" : "another process received",
                              result_.stopped_by_signal));
    return true;
  }
  if (votes[1] > 0) {
    result_.stop_reason = reason.value_or("another process stopped training");
    console_.line(fmt::format("stopping at step {}: {}", progress_.steps, result_.stop_reason));
    return true;
  }
  return votes[2] > 0;
}

std::optional<std::string> Trainer::reached_stop_at() const {
  if (!options_.stop_at) return std::nullopt;
  auto it = result_.last.find(options_.monitor);
  // A NaN reaches no goal; the test below is negated, so without this it would.
  if (it == result_.last.end() || std::isnan(it->second)) return std::nullopt;
  double goal = *options_.stop_at;
  if (options_.mode == Mode::kMax ? it->second < goal : it->second > goal) return std::nullopt;
  return fmt::format("{} reached {:.6g} (train.stop_at: {:.6g})", options_.monitor, it->second,
                     goal);
}

void Trainer::log_training(Window& window) {
  if (window.steps == 0) return;
  double elapsed = clock_() - window.started;
  combine_over_ranks(parts_.objective, *parts_.context);
  MetricValues values;
  if (parts_.objective.saw_examples()) values = parts_.objective.values("train");
  values["train/lr"] = optim::current_lr(parts_.optimizer);
  if (hyper_parameters_)
    for (const auto& [name, value] : hyper_parameters_->values()) values["train/" + name] = value;
  values["train/samples_per_s"] = elapsed > 0 ? double(window.samples) / elapsed : 0;
  std::map<std::string, double> shares = {{"data", window.data_wait},
                                          {"forward", window.forward},
                                          {"backward", window.backward},
                                          {"optimizer", window.optimizer},
                                          {"callbacks", window.callbacks}};
  if (parts_.context->world_size() > 1) shares["communication"] = window.communication;
  add_time_shares(shares, elapsed, values);
  values["system/peak_rss_mb"] = peak_resident_mb();
  if (std::optional<double> gpu = cuda_peak_allocated_mb(parts_.device))
    values["system/cuda_peak_allocated_mb"] = *gpu;
  for (const auto& [tag, value] : loop_->take_values(*parts_.context)) values[tag] = value;
  if (window.norms > 0) values["train/grad_norm"] = window.grad_norm_sum / double(window.norms);
  if (window.penalty_sum.defined())
    values["train/regularization"] = window.penalty_sum.item<double>() / double(window.updates);
  if (precision_.scales_loss()) values["train/loss_scale"] = precision_.scaler().value();
  if (skipped_steps_ > 0) values["train/skipped_steps"] = double(skipped_steps_);
  record(values);  // the console's sink prints the training line
  parts_.objective.reset();
  window = Window{};
  window.started = clock_();
}

void Trainer::validate() {
  if (!parts_.val) return;
  for (Callback* callback : parts_.callbacks) callback->on_validation_begin(*this);
  MetricValues values;
  {
    SwappedWeights swapped(parts_.model, evaluation_weights());
    values = evaluate(parts_.model, *parts_.val, *parts_.val_objective, parts_.device, "val",
                      options_.val_steps, nullptr, parts_.context.get());
    for (const auto& [tag, value] : loop_->validation_values(
             parts_.model, *parts_.val, parts_.device, options_.val_steps, *parts_.context))
      values[tag] = value;
  }
  // A mean teacher's student: the weights that train, beside the average validated above.
  if (loop_->validates_student())
    for (const auto& [tag, value] :
         evaluate(parts_.model, *parts_.val, *parts_.val_objective, parts_.device, "val/student",
                  options_.val_steps, nullptr, parts_.context.get()))
      values[tag] = value;
  record(values);  // the console's sink prints the validation line
  // After record(): a schedule watching a train/ tag reads its latest logged value.
  if (parts_.scheduler) {
    std::string change = parts_.scheduler->observe(result_.last);
    if (!change.empty()) console_.line(fmt::format("step {}: {}", progress_.steps, change));
  }
  for (Callback* callback : parts_.callbacks) callback->on_validation_end(*this, values);
}

void Trainer::report_skipped(int64_t epoch) {
  data::SkippedRecords skipped = parts_.train.dataset().skipped_records();
  if (skipped.count == 0) return;
  record({{"train/skipped_records", double(skipped.count)},
          {"train/skipped_bytes", double(skipped.bytes)}});
  // Bytes are worth a mention when framing was lost: more may be gone than the records counted.
  std::string bytes =
      skipped.bytes > 0 ? fmt::format(", {} damaged bytes passed over", skipped.bytes) : "";
  console_.line(
      fmt::format("epoch {}: skipped {} corrupt training records{} (on_corrupt: skip); "
                  "the first: {}",
                  epoch + 1, skipped.count, bytes, skipped.first_problem));
}

void Trainer::report_unseen(int64_t epoch) {
  std::map<std::string, int64_t> unseen = parts_.train.dataset().info().unseen_categories;
  int64_t total = 0;
  for (const auto& entry : unseen) total += entry.second;
  if (total == reported_unseen_) return;
  reported_unseen_ = total;
  record({{"train/unseen_categories", double(total)}});
  console_.line(
      fmt::format("epoch {}: {} training values so far were in no vocabulary ({}); they "
                  "went to OOV buckets",
                  epoch + 1, total, data::unseen_text(unseen)));
}

const NamedTensors* Trainer::evaluation_weights() const {
  const NamedTensors* weights = loop_->evaluation_weights();
  if (weights) return weights;  // no callback keeps an average beside the loop's (training_loop)
  for (const Callback* callback : parts_.callbacks)
    if (const NamedTensors* own = callback->evaluation_weights()) weights = own;
  return weights;
}

NamedTensors Trainer::evaluated_weights() const {
  const NamedTensors* swapped = evaluation_weights();
  NamedTensors copy;
  for (const auto& [name, tensor] : swapped ? *swapped : named_state(parts_.model))
    copy[name] = tensor.detach().clone();
  return copy;
}

void Trainer::weights_replaced() {
  saved_step_ = -1;
  for (Callback* callback : parts_.callbacks) callback->on_weights_replaced(*this);
}

std::vector<std::string> Trainer::monitorable() const {
  return monitorable_tags(parts_.objective, parts_.val != nullptr, loop_);
}

void Trainer::record(const MetricValues& values) {
  double wall = clock_();
  for (const auto& [tag, value] : values) {
    metrics_.append(progress_.steps, progress_.epochs, tag, value, wall);
    result_.last[tag] = value;
    if (tag != options_.monitor) continue;
    std::optional<double> best;
    if (result_.best) best = result_.best->value;
    if (improves(value, best, options_.mode)) result_.best = BestValue{tag, value, progress_.steps};
  }
  metrics_.end_record();
}

void Trainer::show_progress(int64_t total) {
  console_.progress({progress_.steps, total, progress_.epochs, smoothed_loss_,
                     double(progress_.samples) / std::max(1e-9, progress_.seconds),
                     progress_.seconds});
}

bool Trainer::run_epochs(Window& window) {
  int64_t per_epoch = parts_.train.batches_per_epoch();
  int64_t planned = planned_steps(options_.max, parts_.train, options_.accumulate);
  int64_t total = planned ? parts_.stage.start.steps + planned : 0;
  // A fresh loader stands at epoch 0, batch 0; a resumed one where its checkpoint was taken.
  data::LoaderPosition start = parts_.train.position();
  if (should_stop()) return false;
  for (int64_t epoch = start.epoch;; ++epoch) {
    if (epoch != start.epoch) parts_.train.start_epoch(epoch);
    int64_t index = epoch == start.epoch ? start.batch : 0;
    bool stop = false;
    Group group;
    while (!stop) {
      if (group.batches == 0 && parts_.profiler)
        parts_.profiler->step_begins(progress_.steps + 1, parts_.model);
      double asked = clock_();
      std::optional<data::Batch> batch = parts_.train.next();
      double got = clock_();
      window.data_wait += got - asked;
      profile("data", asked, got);
      if (!batch) break;
      // The epoch's last group may be short: it takes what is left.
      if (group.batches == 0) group.size = std::min(options_.accumulate, per_epoch - index);
      ++index;
      accumulate_batch(*batch, group);
      if (group.batches < group.size) continue;
      if (optimizer_step(group, window) == StepOutcome::kRewound) return true;
      Progress before = progress_;
      progress_.steps += 1;
      progress_.samples += group.samples;
      progress_.epochs = double(epoch) + double(index) / double(per_epoch);
      progress_.seconds = clock_() - start_;
      window.steps += 1;
      window.samples += group.samples;
      group = Group{};
      show_progress(total);  // first: the step's log line carries its elapsed time and ETA
      if (after_step(before, window)) return true;
      stop = should_stop();
    }
    if (parts_.train.position().batch == per_epoch) {
      report_skipped(epoch);
      report_unseen(epoch);
      for (Callback* callback : parts_.callbacks) callback->on_epoch_end(*this);
      stop = stop || should_stop();
    }
    // The last steps' values, before the final log line, validation and checkpoint.
    if (stop) return settle_through(progress_.steps, window) == StepOutcome::kRewound;
  }
}

TrainResult Trainer::fit() {
  start_ = clock_() - progress_.seconds;  // a resumed run goes on counting its time
  parts_.model.train();
  for (Callback* callback : parts_.callbacks) callback->on_fit_begin(*this);
  clear_gradients();
  Window window;
  window.started = clock_();
  while (run_epochs(window)) {
    window = Window{};  // a rewind: what the window held belongs to the abandoned steps
    window.started = clock_();
  }
  // A run stopped by a signal is to be resumed: the steps since the last log line are not logged
  // at the stop, so that its curves have the points of an uninterrupted run (the resumed run's
  // next point covers the steps after the resume).
  if (result_.stopped_by_signal == 0) {
    log_training(window);
    if (!validated_) {
      validate();
      saved_step_ = -1;  // a checkpoint the last step wrote lacks this validation: save again
    }
    validated_ = true;
    // Restored weights (early stopping's best) call weights_replaced(), which asks for a save.
    for (Callback* callback : parts_.callbacks) callback->on_fit_end(*this);
  }
  if (parts_.profiler) parts_.profiler->finish();
  console_.finish();
  result_.progress = progress_;
  result_.data_position = parts_.train.position();
  // Also when a callback asked at the end (the export callback's `when: end`).
  if (saved_step_ != progress_.steps || checkpoint_requested_) save_checkpoint();
  return result_;
}

}  // namespace kiln::engine
