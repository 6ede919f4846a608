#pragma once
// A tiny, fully controlled training setup for the Trainer's unit tests: a linear model over a
// few random examples, a fake clock that only the fakes below move, and a parsed metrics.csv. The
// fake metrics stand in for work whose duration and result the test decides, so every number the
// trainer logs can be predicted exactly.
// Thread-safety: one test thread.

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/trainer.h"
#include "kiln/optim/optimizer.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::engine::test_rig {

/// Counts the examples seen since the last reset and moves the fake clock by a fixed time per
/// batch, so a test decides how long training steps and validations take.
class CountingMetric : public metrics::Metric {
 public:
  CountingMetric(double* now, double seconds_per_batch)
      : now_(now), seconds_per_batch_(seconds_per_batch) {}
  void reset() override { count_ = 0; }
  void update(const torch::Tensor&, const torch::Tensor& target) override {
    count_ += static_cast<double>(target.size(0));
    *now_ += seconds_per_batch_;
  }
  std::vector<double> sums() const override { return {count_}; }
  void set_sums(const std::vector<double>& sums) override { count_ = sums.at(0); }
  double value() const override { return count_; }

 private:
  double* now_;
  double seconds_per_batch_;
  double count_ = 0;
};

/// Reports the scripted values one after the other, one per value() call (the last repeats).
class ScriptedMetric : public metrics::Metric {
 public:
  explicit ScriptedMetric(std::vector<double> script) : script_(std::move(script)) {}
  void reset() override {}
  void update(const torch::Tensor&, const torch::Tensor&) override {}
  std::vector<double> sums() const override { return {}; }
  double value() const override { return script_[std::min(calls_++, script_.size() - 1)]; }

 private:
  std::vector<double> script_;
  mutable size_t calls_ = 0;
};

/// Cross-entropy that turns NaN from its `poisoned_call`-th call on (1-based), or at that call
/// only when `once`; or, given a finite `factor`, that many times larger (huge gradients).
class PoisonedLoss : public losses::Loss {
 public:
  explicit PoisonedLoss(int poisoned_call, bool once = false,
                        double factor = std::numeric_limits<double>::quiet_NaN())
      : poisoned_call_(poisoned_call), once_(once), factor_(factor) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    torch::Tensor loss = torch::nn::functional::cross_entropy(output, target);
    ++calls_;
    if (calls_ < poisoned_call_ || (once_ && calls_ > poisoned_call_)) return loss;
    return loss * factor_;
  }

 private:
  int poisoned_call_;
  bool once_;
  double factor_;
  mutable int calls_ = 0;
};

inline std::vector<Objective::Head> single_head(std::shared_ptr<const losses::Loss> loss,
                                                std::vector<NamedMetric> metrics) {
  std::vector<Objective::Head> heads;
  heads.push_back({"", std::move(loss), 1.0, std::move(metrics), "target", ""});
  return heads;
}

/// Regularizers from config texts, as the config's regularization[i] would build them.
inline std::vector<RegularizerEntry> regularizer_entries(const std::vector<std::string>& yaml) {
  std::vector<RegularizerEntry> entries;
  for (size_t i = 0; i < yaml.size(); ++i) {
    std::string path = "regularization[" + std::to_string(i) + "]";
    entries.push_back(
        {losses::regularizer_registry().create(read_spec("regularizer", yaml[i], path)), path});
  }
  return entries;
}

struct CsvRow {
  int64_t step = 0;
  std::string tag;  // split/metric
  double value = 0;
};

inline TrainOptions train_options(const std::string& max, const std::string& validate_every,
                                  const std::string& log_every) {
  TrainOptions options;
  options.max = Period::parse(max);
  options.validate_every = Period::parse(validate_every);
  options.log_every = Period::parse(log_every);
  return options;
}

inline std::shared_ptr<const data::Dataset> random_dataset(int64_t size, int64_t seed) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  return std::make_shared<data::TensorDataset>(torch::randn({size, 4}),
                                               torch::arange(size, torch::kInt64) % 3);
}

/// Training examples come in batches of 2 by default (so 4 steps per epoch with 8 examples),
/// validation examples in batches of 4. Training batches take 1 s of fake time, validation
/// batches 100 s. Tests may replace the loss and metrics before fit() (once: fit() takes them).
struct TrainerRig {
  /// `train_seed` draws the training examples (another seed: other examples of the same size).
  explicit TrainerRig(int64_t train_size = 8, int64_t val_size = 6,
                      const std::string& optimizer_yaml = "{type: sgd, lr: 0.1}",
                      int64_t batch_size = 2, torch::Device on = torch::kCPU,
                      int64_t train_seed = 1)
      : device(on),
        model(linear_model(on)),
        optimizer(optim::optimizer_registry().create(read_spec("optimizer", optimizer_yaml),
                                                     model->parameters())),
        loss(losses::loss_registry().create(read_spec("loss", "cross_entropy"))),
        train(random_dataset(train_size, train_seed), {}, {batch_size, false, false, 1}) {
    if (val_size > 0)
      val.emplace(random_dataset(val_size, 2),
                  std::vector<std::shared_ptr<const data::Transform>>{},
                  data::LoaderOptions{4, false, false, 1});
    metrics.push_back({"count", std::make_unique<CountingMetric>(&now, 1.0)});
    val_metrics.push_back({"count", std::make_unique<CountingMetric>(&now, 100.0)});
  }

  /// One linear layer, 4 -> 3, on `device`.
  static std::shared_ptr<models::Model> linear_model(torch::Device device) {
    auto model = models::build_model(
        read_spec("model", "{type: sequential, layers: [{type: linear, out: 3}]}"), {4});
    model->to(device);
    return model;
  }

  TrainResult fit(const TrainOptions& options) {
    MetricsLog log(dir.file("metrics.csv"));
    // Closed even when the trainer throws, which several tests expect it to.
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(
        std::fopen(dir.file("console.txt").c_str(), "w"), &std::fclose);
    Clock clock = [this] { return now; };
    Console console(out.get(), false, dir.file("train.log"), clock);
    ConsoleMetricSink console_lines(console);
    MetricSinks sinks({&log, &console_lines});
    // The loss and metrics the test left in place, moved into the two objectives.
    std::shared_ptr<const losses::Loss> shared_loss = std::move(loss);
    Objective objective(single_head(shared_loss, std::move(metrics)));
    Objective val_objective(single_head(shared_loss, std::move(val_metrics)));
    TrainerParts parts{*model, *optimizer,     objective,      train, val ? &*val : nullptr,
                       device, &val_objective, scheduler.get()};
    parts.callbacks = callbacks;
    parts.checkpoints_dir = checkpoints_dir;
    parts.stop_signal = stop_signal;
    parts.schedules = schedules;
    parts.context = context;
    parts.profiler = profiler;
    Regularization regularization(regularizer_entries(regularizers), model->named_parameters());
    if (!regularization.empty()) parts.regularization = &regularization;
    Trainer trainer(parts, options, sinks, console, clock);
    if (!resume_from.empty()) {
      trainer.resume(read_train_state(resume_from), resume_from);
    }
    return trainer.fit();
  }

  /// A callback from its config text, as the config's callbacks[index] would build it.
  Callback* add_callback(const std::string& yaml, int index = 0) {
    ComponentSpec spec = read_spec("callback", yaml, "callbacks[" + std::to_string(index) + "]");
    owned_callbacks.push_back(callback_registry().create(spec));
    owned_callbacks.back()->type = spec.type();
    owned_callbacks.back()->config_path = spec.path;
    callbacks.push_back(owned_callbacks.back().get());
    return callbacks.back();
  }

  /// metrics.csv without its header.
  std::vector<CsvRow> rows() const {
    std::ifstream in(dir.file("metrics.csv"));
    std::string line, step, epoch, split, metric, value;
    std::getline(in, line);
    std::vector<CsvRow> rows;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::getline(fields, step, ',');
      std::getline(fields, epoch, ',');
      std::getline(fields, split, ',');
      std::getline(fields, metric, ',');
      std::getline(fields, value, ',');
      rows.push_back({std::stoll(step), split + "/" + metric, std::stod(value)});
    }
    return rows;
  }

  std::vector<int64_t> steps_logged(const std::string& tag) const {
    std::vector<int64_t> steps;
    for (const auto& row : rows())
      if (row.tag == tag) steps.push_back(row.step);
    return steps;
  }

  std::vector<double> values_logged(const std::string& tag) const {
    std::vector<double> values;
    for (const auto& row : rows())
      if (row.tag == tag) values.push_back(row.value);
    return values;
  }

  kiln::testing::TempDir dir;
  double now = 1e9;      // the fake clock, in seconds since the epoch
  torch::Device device;  // the model's; batches are moved there
  std::shared_ptr<models::Model> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<losses::Loss> loss;
  std::vector<NamedMetric> metrics, val_metrics;
  std::unique_ptr<optim::Scheduler> scheduler;               // none unless a test sets one
  std::map<std::string, const optim::Scheduler*> schedules;  // hyper-parameter schedules
  std::vector<std::string> regularizers;                     // `regularization:` entries
  std::vector<Callback*> callbacks;
  std::vector<std::unique_ptr<Callback>> owned_callbacks;
  std::string checkpoints_dir;  // "" = no checkpoints
  const std::atomic<int>* stop_signal = nullptr;
  std::shared_ptr<distributed::Context> context = distributed::single_process();
  std::string resume_from;  // a checkpoint directory fit() continues from, "" = a fresh start
  StepProfiler* profiler = nullptr;
  data::Loader train;
  std::optional<data::Loader> val;
};

}  // namespace kiln::engine::test_rig
