#include "kiln/engine/run_folder.h"

#include <algorithm>

#include "kiln/core/text_file.h"
#include "kiln/engine/resume.h"

namespace kiln::engine {

RunFolder::RunFolder(RunDirectory directory, int rank)
    : directory_(std::move(directory)), rank_(rank) {}

std::unique_ptr<RunLock> RunFolder::lock() const {
  return writes() ? std::make_unique<RunLock>(directory_) : nullptr;
}

void RunFolder::write_config(const std::string& yaml) const {
  if (writes()) write_file_atomic(directory_.file("config.yaml"), yaml);
}

void RunFolder::write_notes(const std::string& text) const {
  if (writes()) write_file_atomic(directory_.file("notes.md"), text + "\n");
}

void RunFolder::write_record(const RunRecord& record) const {
  if (writes()) directory_.write_json("run.json", record.json());
}

void RunFolder::write_summary(const Json& summary) const {
  if (writes()) directory_.write_json("summary.json", summary);
}

void RunFolder::write_inputs(const Json& inputs) const {
  if (writes()) directory_.write_json("inputs.json", inputs);
}

MetricSink& RunFolder::metrics() {
  if (!writes()) return nothing_;
  if (!csv_) {
    csv_ = std::make_unique<MetricsLog>(directory_.file("metrics.csv"));
    sinks_.add(*csv_);
  }
  return sinks_;
}

void RunFolder::rewind_to(int64_t step) {
  if (!writes()) return;
  remove_checkpoints_after(checkpoints(), std::max<int64_t>(step, 0));
  metrics().truncate_after(step);
}

}  // namespace kiln::engine
