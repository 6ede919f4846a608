#include "kiln/bench/training_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "kiln/core/peak_memory.h"
#include "kiln/engine/metric_sink.h"
#include "kiln/engine/runtime.h"
#include "kiln/engine/step_profiler.h"
#include "kiln/engine/trainer.h"
#include "kiln/experiment/precision_choice.h"
#include "kiln/experiment/stages.h"
#include "kiln/experiment/training_session.h"

namespace kiln::bench {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace {

constexpr int64_t kNever = std::numeric_limits<int32_t>::max();

// The stage's own training options, reduced to the steps: a fixed count, nothing that needs
// validation or checkpoints.
engine::TrainOptions step_only(engine::TrainOptions options, const BenchOptions& bench) {
  options.max = Period{double(bench.warmup + bench.steps), Period::Unit::kSteps};
  options.validate_every = Period{double(kNever), Period::Unit::kSteps};
  options.log_every = Period{double(kNever), Period::Unit::kSteps};
  options.monitor = "train/loss";
  options.mode = Mode::kMin;
  options.stop_at.reset();
  options.on_nan = engine::OnNan::kSkipStep;
  options.profile.reset();
  return options;
}

std::vector<LayerCost> layer_costs(const engine::StepProfiler& profiler,
                                   const std::vector<models::SummaryRow>& rows) {
  std::map<std::string, LayerCost> by_path;
  for (const auto& step : profiler.steps())
    for (const auto& call : step.layers) {
      auto path = profiler.layer_paths().find(call.module);
      if (path == profiler.layer_paths().end()) continue;
      LayerCost& cost = by_path[path->second];
      cost.forward += call.forward_end - call.forward_begin;
      if (call.backward_end > 0) cost.backward += call.backward_end - call.backward_begin;
      cost.activation_bytes += call.output_bytes;
    }
  double steps = std::max<double>(1, double(profiler.steps().size()));
  std::vector<LayerCost> costs;
  for (const auto& row : rows) {
    LayerCost cost = by_path[row.path];
    cost.row = row;
    cost.forward /= steps;
    cost.backward /= steps;
    cost.activation_bytes = int64_t(double(cost.activation_bytes) / steps);
    costs.push_back(cost);
  }
  return costs;
}

void add_step_times(const engine::StepProfiler& profiler, TrainingCost& cost) {
  double steps = std::max<double>(1, double(profiler.steps().size()));
  for (const auto& step : profiler.steps()) {
    if (step.phases.empty()) continue;
    for (const auto& phase : step.phases) cost.phases[phase.phase] += phase.end - phase.begin;
    cost.step += step.phases.back().end - step.phases.front().begin;
  }
  for (auto& [phase, seconds] : cost.phases) seconds /= steps;
  cost.step /= steps;
  // The model itself is called by the objective, unobserved: its row is the forward and
  // backward phases (the loss included).
  if (!cost.layers.empty() && cost.layers.front().row.path.empty()) {
    cost.layers.front().forward = cost.phases["forward"];
    cost.layers.front().backward = cost.phases["backward"];
  }
}

std::string milliseconds(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }

std::string size_text(int64_t bytes) {
  if (bytes == 0) return "-";
  if (bytes < (1 << 20)) return fmt::format("{:.1f} KiB", double(bytes) / (1 << 10));
  return fmt::format("{:.2f} MiB", double(bytes) / (1 << 20));
}

std::string share(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

}  // namespace

TrainingCost bench_training(const RawConfig& raw, const BenchOptions& options, Clock clock) {
  experiment::ExperimentConfig config = experiment::parse_experiment(raw);
  std::vector<experiment::Stage> stages = experiment::plan_stages(raw, config);
  engine::Runtime runtime = experiment::runtime_of(config);
  runtime.apply();
  RunSession run(stages.front().config, runtime.device);
  std::unique_ptr<StageSession> stage = open_stage(run, stages.front());
  const experiment::ExperimentConfig& first = stages.front().config;

  engine::StepProfiler profiler(options.warmup + 1, options.warmup + options.steps, clock, nullptr);
  engine::TrainerParts parts = stage->parts(run, "", "", nullptr, {});
  parts.val = nullptr;
  parts.val_objective = nullptr;
  parts.scheduler = nullptr;
  parts.schedules.clear();
  parts.callbacks.clear();
  parts.profiler = &profiler;
  engine::NullMetricSink nothing;
  Console quiet(nullptr, false, "", clock);
  engine::TrainOptions train = step_only(first.train, options);
  train.precision = choose_precision(train.precision, hardware_of(runtime.device)).used;  // auto
  engine::Trainer trainer(parts, train, nothing, quiet, clock);
  engine::TrainResult result = trainer.fit();

  TrainingCost cost;
  cost.device = runtime.device.str();
  cost.batch_size = first.data.batch_size * first.train.accumulate;
  cost.steps = int64_t(profiler.steps().size());
  cost.warmup = options.warmup;
  cost.threads = runtime.threads;
  cost.examples_per_step = double(result.progress.samples) / double(result.progress.steps);
  cost.layers = layer_costs(profiler, models::summarize(*run.model, run.inputs.front().shape).rows);
  add_step_times(profiler, cost);
  cost.pipeline = time_pipeline(run.experiment, "train", 1, clock, options.pipeline_batches);
  cost.peak_rss_mb = peak_resident_mb();
  return cost;
}

std::string format_training_cost(const TrainingCost& cost, int max_depth) {
  using Row = std::array<std::string, 8>;
  std::vector<Row> rows = {{"path", "type", "output", "parameters", "activations", "forward ms",
                            "backward ms", "share"}};
  for (const auto& layer : cost.layers) {
    const auto& row = layer.row;
    if (max_depth >= 0 && row.depth > max_depth) continue;
    rows.push_back({models::row_label(row), row.type, models::outputs_text(row),
                    models::with_thousands(row.trainable + row.frozen),
                    size_text(layer.activation_bytes), milliseconds(layer.forward),
                    milliseconds(layer.backward),
                    share(layer.forward + layer.backward, cost.step)});
  }
  std::array<size_t, 8> width{};
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = fmt::format(
      "{} training steps of batch {} on {} ({} thread{}), after {} warm-up steps\n", cost.steps,
      cost.batch_size, cost.device, cost.threads, cost.threads == 1 ? "" : "s", cost.warmup);
  for (const auto& r : rows)
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}\n", r[0],
                       width[0], r[1], width[1], r[2], width[2], r[3], width[3], r[4], width[4],
                       r[5], width[5], r[6], width[6], r[7], width[7]);
  out += fmt::format("step: {} ms, {:.0f} examples/s", milliseconds(cost.step),
                     cost.examples_per_second());
  for (const char* phase : {"data", "forward", "backward", "optimizer"}) {
    auto it = cost.phases.find(phase);
    double seconds = it == cost.phases.end() ? 0 : it->second;
    out += fmt::format("; {} {} ms ({})", phase, milliseconds(seconds), share(seconds, cost.step));
  }
  out += fmt::format(
      "\ninput pipeline alone: {:.0f} examples/s ({} batches)\npeak memory: {:.0f} MiB "
      "resident\n",
      cost.pipeline.examples_per_second(), cost.pipeline.batches, cost.peak_rss_mb);
  return out;
}

Json training_cost_json(const TrainingCost& cost) {
  Json layers = Json::array();
  for (const auto& layer : cost.layers) {
    Json outputs = Json::array();
    for (const auto& shape : layer.row.outputs) outputs.push_back(shape);
    layers.push_back({{"path", layer.row.path},
                      {"type", layer.row.type},
                      {"depth", layer.row.depth},
                      {"outputs", outputs},
                      {"parameters", layer.row.trainable + layer.row.frozen},
                      {"trainable", layer.row.trainable},
                      {"activation_bytes", layer.activation_bytes},
                      {"forward_ms", layer.forward * 1e3},
                      {"backward_ms", layer.backward * 1e3},
                      {"share", cost.step > 0 ? (layer.forward + layer.backward) / cost.step : 0}});
  }
  Json phases = Json::object();
  for (const auto& [phase, seconds] : cost.phases) phases[phase + "_ms"] = seconds * 1e3;
  return {{"device", cost.device},
          {"batch_size", cost.batch_size},
          {"steps", cost.steps},
          {"warmup", cost.warmup},
          {"threads", cost.threads},
          {"layers", layers},
          {"phases", phases},
          {"step_ms", cost.step * 1e3},
          {"examples_per_s", cost.examples_per_second()},
          {"pipeline",
           {{"examples_per_s", cost.pipeline.examples_per_second()},
            {"batches", cost.pipeline.batches}}},
          {"peak_rss_mb", cost.peak_rss_mb}};
}

}  // namespace kiln::bench
