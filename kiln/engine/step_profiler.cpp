#include "kiln/engine/step_profiler.h"

namespace kiln::engine {
namespace {

constexpr int kStepRow = 1, kBackwardRow = 2;

std::string layer_name(const std::string& path) { return path.empty() ? "(model)" : path; }

}  // namespace

StepProfiler::StepProfiler(int64_t from, int64_t to, Clock clock, Closed closed)
    : from_(from), to_(to), clock_(std::move(clock)), closed_(std::move(closed)) {}

StepProfiler::~StepProfiler() = default;

void StepProfiler::step_begins(int64_t step, torch::nn::Module& model) {
  // The same step again: its batch was the epoch's end, and it goes on in the next epoch.
  if (timer_ && steps_.back().step == step) return;
  if (is_closed_ || step < from_ || step > to_) return;
  if (paths_.empty())
    for (const auto& item : model.named_modules("", /*include_self=*/true))
      paths_[item.value().get()] = item.key();
  steps_.push_back({step, {}, {}});
  // A step that never ended (a NaN rewind) leaves its timer: it must stop listening first.
  timer_.reset();
  timer_ = std::make_unique<models::LayerTimer>(model, clock_);
}

void StepProfiler::phase(const char* name, double begin, double end) {
  if (timer_) steps_.back().phases.push_back({name, begin, end});
}

void StepProfiler::batch_done() {
  if (!timer_) return;
  std::vector<models::LayerTimes> layers = timer_->take();
  auto& kept = steps_.back().layers;
  kept.insert(kept.end(), layers.begin(), layers.end());
}

void StepProfiler::step_ends() {
  if (!timer_) return;
  batch_done();  // calls made after the last backward (a callback's forward) count too
  timer_.reset();
  if (steps_.back().step >= to_) close();
}

void StepProfiler::finish() {
  if (timer_) step_ends();
  if (!is_closed_) close();
}

void StepProfiler::close() {
  is_closed_ = true;
  if (closed_) closed_(*this);
}

ChromeTrace StepProfiler::chrome_trace() const {
  ChromeTrace trace("kiln train");
  trace.name_thread(kStepRow, "training step");
  trace.name_thread(kBackwardRow, "backward by layer");
  for (const auto& step : steps_) {
    double begin = step.phases.empty() ? 0 : step.phases.front().begin;
    double end = step.phases.empty() ? 0 : step.phases.back().end;
    trace.add(
        {"step " + std::to_string(step.step), "step", begin, end, kStepRow, {{"step", step.step}}});
    for (const auto& phase : step.phases)
      trace.add({phase.phase, "phase", phase.begin, phase.end, kStepRow, {{"step", step.step}}});
    for (const auto& layer : step.layers) {
      auto path = paths_.find(layer.module);
      std::string name = layer_name(path == paths_.end() ? "?" : path->second);
      Json args = {{"step", step.step}, {"output_bytes", layer.output_bytes}};
      trace.add({name, "layer forward", layer.forward_begin, layer.forward_end, kStepRow, args});
      if (layer.backward_end > 0)
        trace.add(
            {name, "layer backward", layer.backward_begin, layer.backward_end, kBackwardRow, args});
    }
  }
  return trace;
}

}  // namespace kiln::engine
