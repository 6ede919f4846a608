#include "kiln/engine/trainer.h"

#include <cmath>
#include <filesystem>

#include "kiln/core/suggest.h"
#include "kiln/optim/optimizer.h"

namespace kiln::engine {

struct Trainer::Window {
  int64_t steps = 0, samples = 0;
  double started = 0;
  double data_wait = 0;  // seconds spent waiting for the loader
};

std::vector<std::string> monitorable_tags(const Objective& objective, bool has_val) {
  std::vector<std::string> tags;
  for (const std::string split : {"val", "train"}) {
    if (split == "val" && !has_val) continue;
    for (const auto& tag : objective.tags(split)) tags.push_back(tag);
  }
  return tags;
}

Trainer::Trainer(TrainerParts parts, const TrainOptions& options, MetricsLog& log, Console& console,
                 Clock clock)
    : parts_(parts), options_(options), log_(log), console_(console), clock_(std::move(clock)) {
  KILN_ASSERT(parts_.val == nullptr || parts_.val_objective != nullptr);
  auto tags = monitorable_tags(parts_.objective, parts_.val != nullptr);
  if (std::find(tags.begin(), tags.end(), options_.monitor) == tags.end())
    throw ConfigError("train.monitor", "",
                      "\"" + options_.monitor + "\" is never measured; " +
                          suggestion_text(options_.monitor, tags));
  if (parts_.scheduler) learning_rates_.emplace(parts_.optimizer, *parts_.scheduler);
  progress_ = parts_.stage.start;
}

int64_t planned_steps(const Period& max, const data::Loader& train) {
  double per_epoch = double(train.batches_per_epoch());
  double mean_batch = double(train.dataset().size()) / std::max(1.0, per_epoch);
  return max.in_steps(per_epoch, mean_batch).value_or(0);  // 0: a time, unknown ahead
}

void Trainer::resume(const TrainState& state, const std::string& checkpoint_dir) {
  progress_ = state.progress;
  validated_ = state.validated;
  result_.best = state.best;
  result_.last = state.last;
  restore_rng(state.rng, checkpoint_dir + "/train_state.json");
  parts_.train.seek(state.data);
  for (Callback* callback : parts_.callbacks) {
    if (state.callbacks.contains(callback->type))
      callback->load_state(state.callbacks.at(callback->type));
    std::string tensors = checkpoint_dir + "/" + callback->type + ".safetensors";
    if (std::filesystem::exists(tensors)) callback->load_tensors(read_tensor_file(tensors));
  }
  saved_step_ = progress_.steps;
  result_.checkpoint = checkpoint_dir;
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

void Trainer::train_step(const data::Batch& batch, Window& window) {
  if (learning_rates_) learning_rates_->apply(stage_progress().steps);
  parts_.optimizer.zero_grad();
  torch::Tensor loss = parts_.objective.compute(parts_.model, on_device(batch, parts_.device));
  loss.backward();
  parts_.optimizer.step();
  double value = parts_.objective.last_loss();
  if (!std::isfinite(value))
    // A NaN's sign bit is an accident of the arithmetic; printing "-nan" would only confuse.
    throw Error(fmt::format("training loss became {} at step {}; lower optimizer.lr",
                            std::isnan(value) ? std::string("nan") : fmt::format("{}", value),
                            progress_.steps + 1));
  window.steps += 1;
  smoothed_loss_ = smoothed_loss_ < 0 ? value : 0.95 * smoothed_loss_ + 0.05 * value;
  window.samples += batch.size();
}

void Trainer::after_step(const Progress& before, Window& window) {
  // Callbacks first (an EMA is then current for the validation), the checkpoint last (it then
  // holds this step's validation values and every callback's state after this step).
  for (Callback* callback : parts_.callbacks) callback->on_step_end(*this, before);
  if (options_.log_every.crossed(before, progress_)) log_training(window);
  validated_ = options_.validate_every.crossed(before, progress_);
  if (validated_) {
    double validation_start = clock_();
    validate();
    window.started += clock_() - validation_start;  // throughput counts training time only
  }
  if (checkpoint_requested_) save_checkpoint();
}

bool Trainer::should_stop() {
  if (parts_.stop_signal && parts_.stop_signal->load() != 0) {
    result_.stopped_by_signal = parts_.stop_signal->load();
    console_.line(fmt::format("stopping at step {}: received signal {}", progress_.steps,
                              result_.stopped_by_signal));
    return true;
  }
  for (Callback* callback : parts_.callbacks)
    if (auto reason = callback->should_stop()) {
      result_.stop_reason = *reason;
      console_.line(fmt::format("stopping at step {}: {}", progress_.steps, *reason));
      return true;
    }
  return options_.max.reached(stage_progress());
}

void Trainer::log_training(Window& window) {
  if (window.steps == 0) return;
  double elapsed = clock_() - window.started;
  MetricValues values = parts_.objective.values("train");
  values["train/lr"] = optim::current_lr(parts_.optimizer);
  values["train/samples_per_s"] = elapsed > 0 ? double(window.samples) / elapsed : 0;
  values["train/data_wait"] = elapsed > 0 ? window.data_wait / elapsed : 0;
  record(values);
  console_.line(fmt::format(
      "step {} epoch {:.2f}  loss {:.4f}  lr {:.3g}  {:.0f} samples/s  data wait {:.1f}%",
      progress_.steps, progress_.epochs, values["train/loss"], values["train/lr"],
      values["train/samples_per_s"], 100 * values["train/data_wait"]));
  parts_.objective.reset();
  window = Window{0, 0, clock_(), 0};
}

void Trainer::validate() {
  if (!parts_.val) return;
  MetricValues values;
  {
    SwappedWeights swapped(parts_.model, evaluation_weights());
    values = evaluate(parts_.model, *parts_.val, *parts_.val_objective, parts_.device, "val");
  }
  record(values);
  std::string text = fmt::format("validation at step {}:", progress_.steps);
  for (const auto& [tag, value] : values) text += fmt::format("  {} {:.4f}", tag, value);
  console_.line(text);
  for (Callback* callback : parts_.callbacks) callback->on_validation_end(*this, values);
}

void Trainer::report_skipped(int64_t epoch) {
  data::SkippedRecords skipped = parts_.train.dataset().skipped_records();
  if (skipped.count == 0) return;
  record({{"train/skipped_records", double(skipped.count)}});
  console_.line(
      fmt::format("epoch {}: skipped {} corrupt training records (on_corrupt: skip); "
                  "the first: {}",
                  epoch + 1, skipped.count, skipped.first_problem));
}

const NamedTensors* Trainer::evaluation_weights() const {
  const NamedTensors* weights = nullptr;
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
  return monitorable_tags(parts_.objective, parts_.val != nullptr);
}

void Trainer::record(const MetricValues& values) {
  double wall = clock_();
  for (const auto& [tag, value] : values) {
    log_.append(progress_.steps, progress_.epochs, tag, value, wall);
    result_.last[tag] = value;
    if (tag != options_.monitor) continue;
    bool better = !result_.best || (options_.mode == "min" ? value < result_.best->value
                                                           : value > result_.best->value);
    if (better) result_.best = BestValue{tag, value, progress_.steps};
  }
}

TrainState Trainer::capture_state() const {
  TrainState state;
  state.progress = progress_;
  state.stage = parts_.stage;
  state.data = parts_.train.position();
  state.validated = validated_;
  state.best = result_.best;
  state.last = result_.last;
  state.rng = capture_rng();
  for (const Callback* callback : parts_.callbacks)
    state.callbacks[callback->type] = callback->state();
  return state;
}

void Trainer::save_checkpoint() {
  checkpoint_requested_ = false;
  if (parts_.checkpoints_dir.empty()) return;
  CheckpointContents contents{progress_.steps, &parts_.model, &parts_.optimizer,
                              to_json(capture_state()), parts_.config_yaml};
  for (const Callback* callback : parts_.callbacks) {
    NamedTensors tensors = callback->tensors();
    if (!tensors.empty()) contents.tensor_files[callback->type] = std::move(tensors);
  }
  result_.checkpoint = engine::save_checkpoint(parts_.checkpoints_dir, contents);
  saved_step_ = progress_.steps;
  for (Callback* callback : parts_.callbacks)
    callback->on_checkpoint_saved(*this, result_.checkpoint);
}

void Trainer::show_progress(int64_t total) {
  console_.progress({progress_.steps, total, progress_.epochs, smoothed_loss_,
                     double(progress_.samples) / std::max(1e-9, progress_.seconds),
                     progress_.seconds});
}

void Trainer::run_epochs(Window& window) {
  int64_t per_epoch = parts_.train.batches_per_epoch();
  int64_t planned = planned_steps(options_.max, parts_.train);
  int64_t total = planned ? parts_.stage.start.steps + planned : 0;
  // A fresh loader stands at epoch 0, batch 0; a resumed one where its checkpoint was taken.
  data::LoaderPosition start = parts_.train.position();
  if (should_stop()) return;
  for (int64_t epoch = start.epoch;; ++epoch) {
    if (epoch != start.epoch) parts_.train.start_epoch(epoch);
    int64_t index = epoch == start.epoch ? start.batch : 0;
    bool stop = false;
    while (!stop) {
      double asked = clock_();
      std::optional<data::Batch> batch = parts_.train.next();
      window.data_wait += clock_() - asked;
      if (!batch) break;
      train_step(*batch, window);
      Progress before = progress_;
      progress_.steps += 1;
      progress_.samples += batch->size();
      progress_.epochs = double(epoch) + double(++index) / double(per_epoch);
      progress_.seconds = clock_() - start_;
      after_step(before, window);
      show_progress(total);
      stop = should_stop();
    }
    if (parts_.train.position().batch == per_epoch) {
      report_skipped(epoch);
      for (Callback* callback : parts_.callbacks) callback->on_epoch_end(*this);
      stop = stop || should_stop();
    }
    if (stop) return;
  }
}

TrainResult Trainer::fit() {
  start_ = clock_() - progress_.seconds;  // a resumed run goes on counting its time
  parts_.model.train();
  KILN_CHECK(parts_.train.batches_per_epoch() > 0,
             "the training set yields no batch; lower data.batch_size");
  for (Callback* callback : parts_.callbacks) callback->on_fit_begin(*this);
  Window window{0, 0, clock_(), 0};
  run_epochs(window);
  log_training(window);
  if (result_.stopped_by_signal == 0) {
    if (!validated_) validate();
    validated_ = true;
    for (Callback* callback : parts_.callbacks) callback->on_fit_end(*this);
  }
  console_.finish();
  result_.progress = progress_;
  result_.data_position = parts_.train.position();
  if (saved_step_ != progress_.steps) save_checkpoint();
  return result_;
}

}  // namespace kiln::engine
