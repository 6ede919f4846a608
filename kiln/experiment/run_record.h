#pragma once
// run.json (docs/design.md §6) as one object: what the run is (command line, host, versions, world
// size), its status at every moment (running, then finished, stopped or failed, with the error),
// each resume attempt and, for a staged run, each stage's steps and how it ended. The training
// run changes it through these operations and the run folder writes it, from one place.
// Thread-safety: one thread.

#include <string>

#include "kiln/core/json.h"

namespace kiln::engine {
struct Runtime;
struct StageMark;
struct TrainResult;
}  // namespace kiln::engine

namespace kiln::experiment {

struct Stage;

class RunRecord {
 public:
  /// A new run, started at `now` (seconds since the epoch) by `command_line`, with the
  /// environment's facts (environment_info()) and the job's world size.
  static RunRecord started(const std::string& command_line, double now, int world_size);
  /// A saved run.json reopened to resume: running again, the attempt (with its world size)
  /// appended to "resumed".
  static RunRecord resumed(Json saved, const std::string& command_line, double now, int world_size);

  /// Lists the stages by name (for a run with stages; nothing otherwise).
  void plan_stages(const std::vector<Stage>& stages);
  /// Records how a stage that began at `mark` ended.
  void stage_ended(const Stage& stage, const engine::StageMark& mark,
                   const engine::TrainResult& result);
  /// How the run's runtime was decided on this machine, its threads by runtime.threads or from
  /// the CPUs this process may use (`threads_auto`) among `local_ranks`: "runtime" {"device",
  /// "threads", "threads_why"}.
  void runtime_chosen(const engine::Runtime& runtime, bool threads_auto, int64_t local_ranks);
  /// The precision a stage trains in and why (engine/precision_choice.h): "precision" of the
  /// run for its first stage, and of the stage's record in a run with stages.
  void precision_chosen(const Stage& stage, const Json& precision);
  /// How runtime.channels_last was decided (channels_last_choice.h): "channels_last".
  void channels_last_chosen(const Json& choice) { info_["channels_last"] = choice; }
  /// The end of training: finished, or stopped by a signal.
  void ended(bool stopped_by_signal, double now);
  /// A trial of a study that its pruner stopped (docs/tuning.md): status `pruned`, and why.
  void pruned(const std::string& reason);
  /// Training failed with `error`.
  void failed(const std::string& error, double now);

  const Json& json() const { return info_; }
  /// The stages' records, null for a run without stages.
  Json stages() const { return info_.contains("stages") ? info_["stages"] : Json(); }

 private:
  explicit RunRecord(Json info) : info_(std::move(info)) {}
  Json info_;
};

}  // namespace kiln::experiment
