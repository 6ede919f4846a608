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

struct Session {
  Experiment experiment;
  std::shared_ptr<models::Model> model;
  std::string init_report;  // what model.init_from loaded, "" without it
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<optim::Scheduler> scheduler;
  std::map<std::string, std::unique_ptr<optim::Scheduler>> schedules;  // `schedules:`
  Objective objective, val_objective;
  data::Loader train;
  std::optional<data::Loader> val;
  std::vector<std::unique_ptr<Callback>> callbacks;

  explicit Session(const ExperimentConfig& config)
      : experiment(config),
        model(experiment.build_model("train")),
        init_report(experiment.initialize_model(*model)),
        optimizer(experiment.build_optimizer(*model)),
        objective(experiment.build_objective(*model)),
        val_objective(experiment.build_objective(*model)),
        train(experiment.loader("train")),
        callbacks(experiment.build_callbacks()) {
    if (experiment.has_split("val")) val.emplace(experiment.loader("val"));
    objective.check_targets(train.dataset().target_names(), "train");
    if (val) objective.check_targets(val->dataset().target_names(), "val");
    int64_t accumulate = config.train.accumulate;
    optim::ScheduleSpan span{planned_steps(config.train.max, train, accumulate),
                             steps_per_epoch(train, accumulate),
                             config.data.batch_size * accumulate};
    scheduler = experiment.build_scheduler(span);
    schedules = experiment.build_hyper_schedules(span);
  }

  TrainerParts parts(const RunDirectory& run, const TrainRequest& request) {
    std::vector<Callback*> hooks;
    for (auto& callback : callbacks) hooks.push_back(callback.get());
    TrainerParts out{*model,
                     *optimizer,
                     objective,
                     train,
                     val ? &*val : nullptr,
                     experiment.device(),
                     &val_objective,
                     scheduler.get(),
                     hooks,
                     run.checkpoints(),
                     read_text_file(run.file("config.yaml")),
                     request.stop_signal};
    for (const auto& [name, schedule] : schedules) out.schedules[name] = schedule.get();
    return out;
  }
};

// The newest valid checkpoint of a run being resumed ("" when there is none: the run starts
// over), with the run's files trimmed back to it so nothing is logged or kept twice.
std::string prepare_resume(const RunDirectory& run, Console& console) {
  std::vector<std::string> warnings;
  std::string checkpoint;
  try {
    checkpoint = find_checkpoint(run.path(), "last", &warnings);
  } catch (const Error&) {
    // None was saved, or none passes its check: the run starts again from its beginning.
  }
  for (const auto& warning : warnings) console.line("warning: " + warning);
  int64_t step = checkpoint.empty() ? -1 : checkpoint_step(checkpoint);
  remove_checkpoints_after(run.checkpoints(), std::max<int64_t>(step, 0));
  trim_metrics(run.file("metrics.csv"), step);
  if (checkpoint.empty()) console.line("resuming: no valid checkpoint yet; starting over");
  return checkpoint;
}

// Puts a checkpoint's weights, optimizer state and train state into the session and trainer.
void load_training_checkpoint(const std::string& checkpoint, Session& s, Trainer& trainer,
                              Console& console) {
  load_model_weights(checkpoint, *s.model);
  load_optimizer_state(checkpoint, *s.optimizer);
  std::string state_file = checkpoint + "/train_state.json";
  Json state;
  try {
    state = Json::parse(read_text_file(state_file));
  } catch (const Json::parse_error& e) {
    throw DataError(state_file, -1, static_cast<int64_t>(e.byte), e.what());
  }
  trainer.resume(train_state_from_json(state, state_file), checkpoint);
  console.line(fmt::format("resumed from {} at step {}", checkpoint, checkpoint_step(checkpoint)));
}

TrainResult train_in(const RunDirectory& run, Session& s, const ExperimentConfig& config,
                     const TrainRequest& request, std::FILE* out, Clock clock) {
  Console console(out, ::isatty(::fileno(out)) != 0, run.file("train.log"), clock);
  console.line(fmt::format("model: {}; {} training examples, {} steps per epoch; {}",
                           parameters_text(*s.model), s.train.dataset().size(),
                           s.train.batches_per_epoch(), s.experiment.device().str()));
  if (!s.init_report.empty() && request.resume_dir.empty()) console.line(s.init_report);
  // Before the metrics log opens the file: trimming replaces it.
  std::string checkpoint = request.resume_dir.empty() ? "" : prepare_resume(run, console);
  MetricsLog log(run.file("metrics.csv"));
  // Made before the checkpoint is loaded: it takes the optimizer's configured learning rates as
  // the schedule's base rates.
  Trainer trainer(s.parts(run, request), config.train, log, console, clock);
  if (!checkpoint.empty()) load_training_checkpoint(checkpoint, s, trainer, console);
  TrainResult result = trainer.fit();
  if (!result.checkpoint.empty()) console.line("checkpoint: " + result.checkpoint);
  return result;
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
  if (request.dry_run) {
    Session session(config);
    std::fprintf(out, "config ok: model has %lld parameters\n",
                 static_cast<long long>(parameter_count(*session.model)));
    return {};
  }
  bool resuming = !request.resume_dir.empty();
  RunDirectory run = resuming ? RunDirectory::open(request.resume_dir)
                              : RunDirectory::create(request.runs_root, config.name,
                                                     static_cast<std::time_t>(clock()));
  std::fprintf(out, "run: %s\n", run.path().c_str());
  std::fflush(out);
  Json info = resuming ? resumed_run_info(run, request, clock) : new_run_info(request, clock);
  // On resume the saved config stays: resumable overrides are recorded with the attempt.
  if (!resuming) write_file_atomic(run.file("config.yaml"), to_yaml(resolved_config(config)));
  if (!request.note.empty()) write_file_atomic(run.file("notes.md"), request.note + "\n");
  run.write_json("run.json", info);
  TrainOutcome outcome{run.path(), 0};
  try {
    Session session(config);
    TrainResult result = train_in(run, session, config, request, out, clock);
    run.write_json("summary.json", summary_json(result));
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

MetricValues evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                          const std::string& split) {
  RunDirectory run = RunDirectory::open(run_dir);
  ExperimentConfig config = parse_experiment(load_config({run.file("config.yaml")}, {}));
  std::string checkpoint_dir = find_checkpoint(run.path(), checkpoint);
  Experiment experiment(config);
  data::Loader loader = experiment.loader(split);
  auto model = experiment.build_model(split);
  load_evaluation_weights(checkpoint_dir, *model);
  Objective objective = experiment.build_objective(*model);
  objective.check_targets(loader.dataset().target_names(), split);
  return evaluate(*model, loader, objective, experiment.device(), split);
}

}  // namespace kiln::engine
