#include "kiln/experiment/run_folder.h"

#include <unistd.h>

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/experiment/resume.h"
#include "kiln/models/torchscript_file.h"
#include "kiln/models/torchscript_model.h"

namespace kiln::experiment {

namespace {

std::string indented(const std::string& text) {
  std::string out = "    ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

}  // namespace

RunFolder::RunFolder(run::RunDirectory directory, int rank)
    : directory_(std::move(directory)), rank_(rank) {}

std::unique_ptr<run::RunLock> RunFolder::lock() const {
  return writes() ? std::make_unique<run::RunLock>(directory_) : nullptr;
}

void RunFolder::open_tensorboard(const engine::TensorBoardOptions& options, Clock clock) {
  KILN_ASSERT(!csv_);  // metrics() has not been handed out without TensorBoard's scalars
  tensorboard_ = options;
  clock_ = std::move(clock);
  if (!writes() || !options.enabled) {
    tensorboard_.enabled = false;
    return;
  }
  events_ = std::make_unique<tensorboard::EventLog>(
      directory_.file(run::kTensorBoardFolder),
      tensorboard::EventFileName{0, tensorboard::host_name(), static_cast<int>(::getpid())});
  if (options.scalars) {
    events_sink_ = std::make_unique<TensorBoardSink>(*events_);
    sinks_.add(*events_sink_);
  }
}

void RunFolder::write_config(const std::string& yaml) {
  if (!writes()) return;
  write_file_atomic(directory_.file(run::kConfigFile), yaml);
  // Four spaces: a Markdown code block, so TensorBoard's text tab keeps the YAML's indentation.
  if (events_ && tensorboard_.text) events_->text("", "config", 0, indented(yaml), clock_());
}

void RunFolder::write_notes(const std::string& text) {
  if (!writes()) return;
  write_file_atomic(directory_.file(run::kNotesFile), text + "\n");
  if (events_ && tensorboard_.text) events_->text("", "notes", 0, text, clock_());
}

void RunFolder::write_record(const RunRecord& record) const {
  if (writes()) directory_.write_json(run::kRecordFile, record.json());
}

void RunFolder::write_summary(const Json& summary) const {
  if (writes()) directory_.write_json(run::kSummaryFile, summary);
}

void RunFolder::write_trace(const Json& trace) const {
  if (writes()) directory_.write_json(run::kTraceFile, trace);
}

void RunFolder::write_inputs(const Json& inputs) const {
  if (writes()) directory_.write_json(run::kInputsFile, inputs);
}

void RunFolder::write_module(models::Model& model) const {
  models::TorchScriptModel* scripted = models::as_torchscript(model);
  if (writes() && scripted)
    write_file_atomic(directory_.file(run::kModuleFile),
                      models::torchscript_bytes(scripted->scripted()));
}

void RunFolder::write_preprocessing(const Json& preprocessing) const {
  if (writes()) directory_.write_json(run::kPreprocessingFile, preprocessing);
}

engine::MetricSink& RunFolder::metrics() {
  if (!writes()) return nothing_;
  if (!csv_) {
    csv_ = std::make_unique<engine::MetricsLog>(directory_.file(run::kMetricsFile));
    sinks_.add(*csv_);
  }
  return sinks_;
}

void RunFolder::rewind_to(int64_t step) {
  if (!writes()) return;
  remove_checkpoints_after(checkpoints(), std::max<int64_t>(step, 0));
  metrics().truncate_after(step);
}

}  // namespace kiln::experiment
