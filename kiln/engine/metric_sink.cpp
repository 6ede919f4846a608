#include "kiln/engine/metric_sink.h"

#include <fmt/format.h>

#include "kiln/core/console.h"

namespace kiln::engine {

void MetricSinks::append(int64_t step, double epoch, const std::string& tag, double value,
                         double wall_time) {
  for (MetricSink* sink : sinks_) sink->append(step, epoch, tag, value, wall_time);
}

void MetricSinks::end_record() {
  for (MetricSink* sink : sinks_) sink->end_record();
}

void MetricSinks::truncate_after(int64_t step) {
  for (MetricSink* sink : sinks_) sink->truncate_after(step);
}

void ConsoleMetricSink::append(int64_t step, double epoch, const std::string& tag, double value,
                               double) {
  step_ = step;
  epoch_ = epoch;
  values_[tag] = value;
}

void ConsoleMetricSink::end_record() {
  if (values_.count("train/samples_per_s")) {
    // A window whose rows were all refused (on_corrupt: skip) has no loss.
    auto loss = values_.find("train/loss");
    std::string loss_text = loss == values_.end() ? "-" : fmt::format("{:.4f}", loss->second);
    console_.line(
        fmt::format("step {} epoch {:.2f}  loss {}  lr {:.3g}  {:.0f} samples/s  data wait {:.1f}%",
                    step_, epoch_, loss_text, values_["train/lr"], values_["train/samples_per_s"],
                    100 * values_["train/time/data"]));
  } else if (!values_.empty() && values_.begin()->first.rfind("val/", 0) == 0) {
    std::string text = fmt::format("validation at step {}:", step_);
    for (const auto& [tag, value] : values_) text += fmt::format("  {} {:.4f}", tag, value);
    console_.line(text);
  }
  values_.clear();
}

}  // namespace kiln::engine
