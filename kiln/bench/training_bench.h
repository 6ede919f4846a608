#pragma once
// `kiln bench` (Caffe's `time`, for a whole training step): trains the config's model on its data,
// batch size and device for a few steps after a warm-up, with the step profiler on, and reports
// what a step costs: each layer's forward and backward, its parameters and the activations it
// keeps, the data wait, the optimizer's update, the input pipeline's own rate and peak memory.
// Nothing is written: no run folder, checkpoint or log. Validation, callbacks and the learning-
// rate schedule are left out: they are not the step.
// Thread-safety: one thread.

#include <map>
#include <string>
#include <vector>

#include "kiln/bench/pipeline_bench.h"
#include "kiln/core/config.h"
#include "kiln/core/console.h"
#include "kiln/models/summary.h"

namespace kiln::bench {

struct BenchOptions {
  int64_t warmup = 3;             // steps not measured: first-call allocation, caches
  int64_t steps = 10;             // steps measured
  int64_t pipeline_batches = 50;  // batches the input pipeline is timed on, alone
};

/// One module's cost, per training step (means over the measured steps).
struct LayerCost {
  models::SummaryRow row;            // path, type, output shapes, parameters
  double forward = 0, backward = 0;  // seconds, this module's calls and what runs inside them
  int64_t activation_bytes = 0;      // its outputs' storage, over the step's batches
};

struct TrainingCost {
  std::string device;
  int64_t batch_size = 0, steps = 0, warmup = 0, threads = 0;
  std::vector<LayerCost> layers;
  std::map<std::string, double> phases;  // data, forward, backward, optimizer: seconds per step
  double step = 0;                       // seconds, first data request to the update's end
  double examples_per_step = 0;
  PipelineRate pipeline;
  double peak_rss_mb = 0;

  double examples_per_second() const { return step > 0 ? examples_per_step / step : 0; }
};

/// Builds the first train cycle of `raw` as `kiln train` would and times it.
TrainingCost bench_training(const RawConfig& raw, const BenchOptions& options, Clock clock);

/// The table (rows no deeper than `max_depth`, < 0: all) and the step's totals.
std::string format_training_cost(const TrainingCost& cost, int max_depth);
Json training_cost_json(const TrainingCost& cost);

}  // namespace kiln::bench
