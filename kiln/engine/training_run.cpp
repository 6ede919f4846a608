#include "kiln/engine/training_run.h"

#include <unistd.h>

#include <ctime>

#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/experiment.h"
#include "kiln/engine/resume.h"
#include "kiln/engine/run_dir.h"
#include "kiln/engine/train_state.h"
#include "kiln/engine/trainer.h"
#include "kiln/engine/training_session.h"
#include "kiln/models/summary.h"

namespace kiln::engine {
namespace {

int64_t parameter_count(const torch::nn::Module& model) {
  int64_t count = 0;
  for (const auto& p : model.parameters()) count += p.numel();
  return count;
}

// "421,834 parameters", with the frozen share when train.freeze stopped some.
std::string parameters_text(const torch::nn::Module& model) {
  int64_t frozen = 0;
  for (const auto& p : model.parameters())
    if (!p.requires_grad()) frozen += p.numel();
  std::string text = models::with_thousands(parameter_count(model)) + " parameters";
  return frozen ? text + " (" + models::with_thousands(frozen) + " frozen)" : text;
}

Json summary_json(const TrainResult& result) {
  Json summary = Json::object();
  summary["final"] = Json::object();
  for (const auto& [tag, value] : result.last) summary["final"][tag] = value;
  summary["best"] = result.best ? Json{{"metric", result.best->metric},
                                       {"value", result.best->value},
                                       {"step", result.best->step}}
                                : Json();
  summary["steps"] = result.progress.steps;
  summary["epochs"] = result.progress.epochs;
  summary["samples"] = result.progress.samples;
  summary["seconds"] = result.progress.seconds;
  return summary;
}

// The newest valid checkpoint of a run being resumed ("" when it saved none: the run starts
// over), with the run's files trimmed back to it so nothing is logged or kept twice. When it saved
// some and none is valid, checkpoints and metrics stay: starting over would delete its history.
std::string prepare_resume(const RunDirectory& run, Console& console) {
  std::vector<std::string> warnings;
  std::string checkpoint;
  try {
    checkpoint = find_checkpoint(run.path(), "last", &warnings);
  } catch (const UsageError&) {
    // None was saved: the run starts again from its beginning.
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                "; its checkpoints and metrics.csv are left as they are (to train again, start a "
                "new run)");
  }
  for (const auto& warning : warnings) console.line("warning: " + warning);
  int64_t step = checkpoint.empty() ? -1 : checkpoint_step(checkpoint);
  remove_checkpoints_after(run.checkpoints(), std::max<int64_t>(step, 0));
  trim_metrics(run.file("metrics.csv"), step);
  if (checkpoint.empty()) console.line("resuming: no valid checkpoint yet; starting over");
  return checkpoint;
}

// Whether a run being resumed finished with the config it is resumed with: then there is
// nothing to train, and its files stay as they are.
bool finished_as_configured(const RunDirectory& run, const ExperimentConfig& config) {
  if (run.read_json("run.json").value("status", "") != "finished") return false;
  RawConfig saved = load_config({run.file("config.yaml")}, {});
  return resolved_config(parse_experiment(saved)) == resolved_config(config);
}

// Where a stage's training data starts after the stage before it ended at `previous`: on from
// there when the new stage reads the same batches, else (another batch size, drop_last or
// shuffle) at the next epoch, so no example is seen twice in an epoch.
data::LoaderPosition next_position(const data::LoaderPosition& previous, int64_t per_epoch,
                                   const DataOptions& before, const DataOptions& after) {
  bool same_batches = before.batch_size == after.batch_size &&
                      before.drop_last == after.drop_last && before.shuffle == after.shuffle;
  if (previous.batch < per_epoch && same_batches) return previous;
  return {previous.epoch + 1, 0};
}

// What run.json and summary.json say of each stage: its name, then its steps once it ran.
Json stage_records(const std::vector<Stage>& stages) {
  Json records = Json::array();
  if (stages.front().staged())
    for (const Stage& stage : stages) records.push_back({{"name", stage.name}});
  return records;
}

void record_stage(Json& info, const Stage& stage, const StageMark& mark,
                  const TrainResult& result) {
  if (!stage.staged()) return;
  Json& record = info["stages"][stage.index];
  record = {{"name", stage.name},
            {"start_step", mark.start.steps},
            {"end_step", result.progress.steps},
            {"status", result.stopped_by_signal ? "stopped" : "finished"}};
  if (!result.stop_reason.empty()) record["stop_reason"] = result.stop_reason;
}

struct StageLoop {
  const RunDirectory& run;
  RunSession& session;
  const std::vector<Stage>& stages;
  const TrainRequest& request;
  Console& console;
  MetricsLog& log;
  Clock clock;
  Json& info;

  // Trains stages from `first` on: the first from `checkpoint` when resuming, each later one
  // from where the stage before it ended.
  TrainResult train(size_t first, const std::string& checkpoint,
                    const std::optional<TrainState>& resumed) {
    std::string config_yaml = read_text_file(run.file("config.yaml"));
    TrainResult result;
    data::LoaderPosition ended;
    int64_t per_epoch = 0;
    for (size_t i = first; i < stages.size(); ++i) {
      std::unique_ptr<StageSession> stage = open_stage(session, stages[i]);
      if (i == first) describe(*stage);
      if (stages[i].staged()) console.line(stages[i].title());
      StageMark mark = resumed && i == first ? resumed->stage
                                             : StageMark{static_cast<int64_t>(i), result.progress};
      Trainer trainer(
          stage->parts(session, run.checkpoints(), config_yaml, request.stop_signal, mark),
          stages[i].config.train, log, console, clock);
      if (resumed && i == first) {
        trainer.resume(*resumed, checkpoint);
        console.line(
            fmt::format("resumed from {} at step {}", checkpoint, checkpoint_step(checkpoint)));
      } else if (i != first) {
        stage->train.seek(
            next_position(ended, per_epoch, stages[i - 1].config.data, stages[i].config.data));
        trainer.continue_from(result);
      }
      result = trainer.fit();
      if (!result.checkpoint.empty()) console.line("checkpoint: " + result.checkpoint);
      record_stage(info, stages[i], mark, result);
      run.write_json("run.json", info);
      if (result.stopped_by_signal) break;
      ended = result.data_position;
      per_epoch = stage->train.batches_per_epoch();
    }
    return result;
  }

  void describe(StageSession& stage) {
    console.line(fmt::format("model: {}; {} training examples, {} steps per epoch; {}",
                             parameters_text(*session.model), stage.train.dataset().size(),
                             stage.train.batches_per_epoch(), session.experiment.device().str()));
    if (!session.init_report.empty() && request.resume_dir.empty())
      console.line(session.init_report);
  }
};

TrainResult train_in(const RunDirectory& run, RunSession& s, const std::vector<Stage>& stages,
                     const TrainRequest& request, std::FILE* out, Clock clock, Json& info) {
  Console console(out, ::isatty(::fileno(out)) != 0, run.file("train.log"), clock);
  // Before the metrics log opens the file: trimming replaces it.
  std::string checkpoint = request.resume_dir.empty() ? "" : prepare_resume(run, console);
  std::optional<TrainState> resumed;
  if (!checkpoint.empty()) resumed = read_train_state(checkpoint);
  size_t first = resumed ? static_cast<size_t>(resumed->stage.index) : 0;
  if (first >= stages.size())
    throw Error(fmt::format("{} was taken in stage {}, but the config has {} stage(s)", checkpoint,
                            first + 1, stages.size()));
  MetricsLog log(run.file("metrics.csv"));
  StageLoop loop{run, s, stages, request, console, log, clock, info};
  return loop.train(first, checkpoint, resumed);
}

// run.json's fields for a new run.
Json new_run_info(const TrainRequest& request, Clock& clock) {
  Json info = {{"status", "running"},
               {"start_time", iso_time(static_cast<std::time_t>(clock()))},
               {"command_line", request.command_line}};
  info.update(environment_info());
  return info;
}

// Reopens a run to resume: run.json records the attempt.
Json resumed_run_info(const RunDirectory& run, const TrainRequest& request, Clock& clock) {
  Json info = run.read_json("run.json");
  info["status"] = "running";
  info.erase("end_time");
  info.erase("error");
  if (!info.contains("resumed")) info["resumed"] = Json::array();
  info["resumed"].push_back({{"time", iso_time(static_cast<std::time_t>(clock()))},
                             {"command_line", request.command_line}});
  return info;
}

}  // namespace

TrainOutcome run_training(const TrainRequest& request, std::FILE* out, Clock clock) {
  ExperimentConfig config = parse_experiment(request.config);
  std::vector<Stage> stages = plan_stages(request.config, config);
  if (request.dry_run) {
    RunSession session(stages.front().config);
    check_stages(session, stages);
    std::fprintf(out, "config ok: model has %lld parameters\n",
                 static_cast<long long>(parameter_count(*session.model)));
    return {};
  }
  bool resuming = !request.resume_dir.empty();
  RunDirectory run = resuming ? RunDirectory::open(request.resume_dir)
                              : RunDirectory::create(request.runs_root, config.name,
                                                     static_cast<std::time_t>(clock()));
  RunLock lock(run);
  std::fprintf(out, "run: %s\n", run.path().c_str());
  std::fflush(out);
  if (resuming && finished_as_configured(run, config)) {
    std::fprintf(out,
                 "the run has finished; nothing to resume (to train it further, raise train.max "
                 "with --set)\n");
    return {run.path(), 0};
  }
  Json info = resuming ? resumed_run_info(run, request, clock) : new_run_info(request, clock);
  if (!resuming && stages.front().staged()) info["stages"] = stage_records(stages);
  // On resume the saved config stays: resumable overrides are recorded with the attempt.
  if (!resuming) write_file_atomic(run.file("config.yaml"), to_yaml(resolved_config(config)));
  if (!request.note.empty()) write_file_atomic(run.file("notes.md"), request.note + "\n");
  run.write_json("run.json", info);
  TrainOutcome outcome{run.path(), 0};
  try {
    RunSession session(stages.front().config);
    // Every stage's checks (a one-batch probe of the loss and metrics too) before any training.
    check_stages(session, stages);
    TrainResult result = train_in(run, session, stages, request, out, clock, info);
    Json summary = summary_json(result);
    if (info.contains("stages")) summary["stages"] = info["stages"];
    run.write_json("summary.json", summary);
    info["status"] = result.stopped_by_signal ? "stopped" : "finished";
    if (result.stopped_by_signal) outcome.exit_code = 128 + result.stopped_by_signal;
  } catch (const std::exception& e) {
    info["status"] = "failed";
    info["error"] = e.what();
    info["end_time"] = iso_time(static_cast<std::time_t>(clock()));
    run.write_json("run.json", info);
    throw;
  }
  info["end_time"] = iso_time(static_cast<std::time_t>(clock()));
  run.write_json("run.json", info);
  return outcome;
}

RunEvaluation evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                           const std::string& split, const Clock& clock) {
  RunDirectory run = RunDirectory::open(run_dir);
  ExperimentConfig config = parse_experiment(load_config({run.file("config.yaml")}, {}));
  std::string checkpoint_dir = find_checkpoint(run.path(), checkpoint);
  Experiment experiment(config);
  data::Loader loader = experiment.loader(split);
  auto model = experiment.build_model(split);
  load_evaluation_weights(checkpoint_dir, *model);
  Objective objective = experiment.build_objective(*model);
  objective.check_targets(loader.dataset().target_names(), split);
  RunEvaluation evaluation;
  double start = clock();
  evaluation.values =
      evaluate(*model, loader, objective, experiment.device(), split, 0, &evaluation.examples);
  evaluation.seconds = clock() - start;
  return evaluation;
}

}  // namespace kiln::engine
