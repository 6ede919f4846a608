#include "kiln/engine/trainer.h"

#include <cmath>

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
}

int64_t planned_steps(const Period& max, const data::Loader& train) {
  double per_epoch = double(train.batches_per_epoch());
  double mean_batch = double(train.dataset().size()) / std::max(1.0, per_epoch);
  return max.in_steps(per_epoch, mean_batch).value_or(0);  // 0: a time, unknown ahead
}

void Trainer::train_step(const data::Batch& batch, Window& window) {
  if (learning_rates_) learning_rates_->apply(progress_.steps);
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
  MetricValues values =
      evaluate(parts_.model, *parts_.val, *parts_.val_objective, parts_.device, "val");
  record(values);
  std::string text = fmt::format("validation at step {}:", progress_.steps);
  for (const auto& [tag, value] : values) text += fmt::format("  {} {:.4f}", tag, value);
  console_.line(text);
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

TrainResult Trainer::fit() {
  start_ = clock_();
  parts_.model.train();
  int64_t per_epoch = parts_.train.batches_per_epoch();
  KILN_CHECK(per_epoch > 0, "the training set yields no batch; lower data.batch_size");
  int64_t total = planned_steps(options_.max, parts_.train);
  if (parts_.scheduler) learning_rates_.emplace(parts_.optimizer, *parts_.scheduler);
  Window window{0, 0, start_, 0};
  bool validated_last = false;
  for (int64_t epoch = 0; !options_.max.reached(progress_); ++epoch) {
    parts_.train.start_epoch(epoch);
    int64_t index = 0;
    for (;;) {
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
      if (options_.log_every.crossed(before, progress_)) log_training(window);
      validated_last = options_.validate_every.crossed(before, progress_);
      if (validated_last) {
        double validation_start = clock_();
        validate();
        window.started += clock_() - validation_start;  // throughput counts training time only
      }
      console_.progress({progress_.steps, total, progress_.epochs, smoothed_loss_,
                         double(progress_.samples) / std::max(1e-9, progress_.seconds),
                         progress_.seconds});
      if (options_.max.reached(progress_)) break;
    }
    if (parts_.train.position().batch == per_epoch) report_skipped(epoch);
  }
  log_training(window);
  if (!validated_last) validate();
  console_.finish();
  result_.progress = progress_;
  result_.data_position = parts_.train.position();
  return result_;
}

}  // namespace kiln::engine
