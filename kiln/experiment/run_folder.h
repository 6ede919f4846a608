#pragma once
// The one writer of a run folder (docs/design.md §6). Everything a training job leaves in its run
// folder goes through this object: the resolved config, notes.md, run.json (a RunRecord),
// summary.json, the model's inputs, metrics (as sinks), the console's train.log, the
// checkpoints' directory and TensorBoard's event files (RUN/tensorboard/), and later exports. Every
// process of a job opens the same folder, but only rank 0 writes into it: for any other rank each
// write does nothing, the metrics sink keeps nothing and there is no checkpoints' directory to save
// into (rewinds and resumes still read rank 0's checkpoints). Thread-safety: one thread.

#include <memory>
#include <string>

#include "kiln/core/console.h"
#include "kiln/core/json.h"
#include "kiln/engine/metric_sink.h"
#include "kiln/engine/tensorboard_options.h"
#include "kiln/experiment/run_record.h"
#include "kiln/experiment/tensorboard_sink.h"
#include "kiln/run/run_directory.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::models {
class Model;
}

namespace kiln::experiment {

class RunFolder {
 public:
  /// The folder `directory` as seen by the process of rank `rank`.
  RunFolder(run::RunDirectory directory, int rank);

  const run::RunDirectory& directory() const { return directory_; }
  const std::string& path() const { return directory_.path(); }
  /// Whether this process writes the folder (rank 0).
  bool writes() const { return rank_ == 0; }

  /// Locks the run against a second trainer (RunLock); other ranks take no lock.
  std::unique_ptr<run::RunLock> lock() const;
  /// TensorBoard's event files under RUN/tensorboard/, for what `options` switch on: scalars
  /// join metrics(), and the config and notes written after this go there as text too. Call it
  /// before metrics() and rewind_to(). `clock` gives the events' wall time.
  void open_tensorboard(const engine::TensorBoardOptions& options, Clock clock);
  /// The event files, or null when TensorBoard is off or this process writes nothing.
  tensorboard::EventLog* events() { return events_.get(); }
  const engine::TensorBoardOptions& tensorboard_options() const { return tensorboard_; }

  void write_config(const std::string& yaml);
  void write_notes(const std::string& text);
  void write_record(const RunRecord& record) const;
  void write_summary(const Json& summary) const;
  /// trace.json: the steps train.profile asked for (a Chrome trace).
  void write_trace(const Json& trace) const;
  /// What the model takes (open_model.h), beside the config.
  void write_inputs(const Json& inputs) const;
  /// For a model written in PyTorch, its scripted module (module.pt), so that the run opens
  /// without the file its config names; nothing for another model.
  void write_module(models::Model& model) const;
  /// preprocessing.json: the fitted feature columns (tabular inputs).
  void write_preprocessing(const Json& preprocessing) const;

  /// Where checkpoints are read from, rank 0's.
  std::string checkpoints() const { return directory_.checkpoints(); }
  /// Where the trainer saves checkpoints: checkpoints(), or "" when this process writes nothing.
  std::string checkpoints_to_save() const { return writes() ? checkpoints() : ""; }
  /// train.log for the console, or "" when this process writes nothing.
  std::string console_log() const { return writes() ? directory_.file(run::kTrainLogFile) : ""; }
  /// Every sink of logged values (metrics.csv), opened on first use: a resume trims the files
  /// first.
  engine::MetricSink& metrics();
  /// Makes the folder agree with a resume from the checkpoint of `step` (-1: from the start):
  /// the checkpoints and the logged values after it go.
  void rewind_to(int64_t step);

 private:
  run::RunDirectory directory_;
  int rank_;
  std::unique_ptr<engine::MetricsLog> csv_;
  engine::TensorBoardOptions tensorboard_{};
  Clock clock_;
  std::unique_ptr<tensorboard::EventLog> events_;
  std::unique_ptr<TensorBoardSink> events_sink_;
  engine::NullMetricSink nothing_;
  engine::MetricSinks sinks_;
};

}  // namespace kiln::experiment
