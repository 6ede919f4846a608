#include "kiln/engine/training_run.h"

#include <unistd.h>

#include <ctime>

#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/experiment.h"
#include "kiln/engine/run_dir.h"
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
  Objective objective, val_objective;
  data::Loader train;
  std::optional<data::Loader> val;

  explicit Session(const ExperimentConfig& config)
      : experiment(config),
        model(experiment.build_model("train")),
        init_report(experiment.initialize_model(*model)),
        optimizer(experiment.build_optimizer(*model)),
        objective(experiment.build_objective(*model)),
        val_objective(experiment.build_objective(*model)),
        train(experiment.loader("train")) {
    if (experiment.has_split("val")) val.emplace(experiment.loader("val"));
    objective.check_targets(train.dataset().target_names(), "train");
    if (val) objective.check_targets(val->dataset().target_names(), "val");
    scheduler = experiment.build_scheduler({planned_steps(config.train.max, train),
                                            train.batches_per_epoch(), config.data.batch_size});
  }
};

TrainResult train_in(const RunDirectory& run, Session& s, const ExperimentConfig& config,
                     std::FILE* out, Clock clock) {
  Console console(out, ::isatty(::fileno(out)) != 0, run.file("train.log"), clock);
  console.line(fmt::format("model: {}; {} training examples, {} steps per epoch; {}",
                           parameters_text(*s.model), s.train.dataset().size(),
                           s.train.batches_per_epoch(), s.experiment.device().str()));
  if (!s.init_report.empty()) console.line(s.init_report);
  MetricsLog log(run.file("metrics.csv"));
  TrainerParts parts{*s.model,
                     *s.optimizer,
                     s.objective,
                     s.train,
                     s.val ? &*s.val : nullptr,
                     s.experiment.device(),
                     &s.val_objective,
                     s.scheduler.get()};
  TrainResult result = Trainer(parts, config.train, log, console, clock).fit();
  CheckpointContents checkpoint{
      result.progress.steps, s.model.get(), s.optimizer.get(),
      Json{
          {"step", result.progress.steps},
          {"epoch", result.progress.epochs},
          {"samples", result.progress.samples},
          {"data", {{"epoch", result.data_position.epoch}, {"batch", result.data_position.batch}}}},
      read_text_file(run.file("config.yaml"))};
  std::string saved = save_checkpoint(run.checkpoints(), checkpoint);
  console.line("checkpoint: " + saved);
  return result;
}

}  // namespace

std::string run_training(const TrainRequest& request, std::FILE* out, Clock clock) {
  ExperimentConfig config = parse_experiment(request.config);
  if (request.dry_run) {
    Session session(config);
    std::fprintf(out, "config ok: model has %lld parameters\n",
                 static_cast<long long>(parameter_count(*session.model)));
    return "";
  }
  RunDirectory run =
      RunDirectory::create(request.runs_root, config.name, static_cast<std::time_t>(clock()));
  std::fprintf(out, "run: %s\n", run.path().c_str());
  std::fflush(out);
  write_file_atomic(run.file("config.yaml"), to_yaml(resolved_config(config)));
  if (!request.note.empty()) write_file_atomic(run.file("notes.md"), request.note + "\n");
  Json info = {{"status", "running"},
               {"start_time", iso_time(static_cast<std::time_t>(clock()))},
               {"command_line", request.command_line}};
  info.update(environment_info());
  run.write_json("run.json", info);
  try {
    Session session(config);
    TrainResult result = train_in(run, session, config, out, clock);
    run.write_json("summary.json", summary_json(result));
    info["status"] = "finished";
  } catch (const std::exception& e) {
    info["status"] = "failed";
    info["error"] = e.what();
    info["end_time"] = iso_time(static_cast<std::time_t>(clock()));
    run.write_json("run.json", info);
    throw;
  }
  info["end_time"] = iso_time(static_cast<std::time_t>(clock()));
  run.write_json("run.json", info);
  return run.path();
}

MetricValues evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                          const std::string& split) {
  RunDirectory run = RunDirectory::open(run_dir);
  ExperimentConfig config = parse_experiment(load_config({run.file("config.yaml")}, {}));
  std::string checkpoint_dir = find_checkpoint(run.path(), checkpoint);
  Experiment experiment(config);
  data::Loader loader = experiment.loader(split);
  auto model = experiment.build_model(split);
  load_model_weights(checkpoint_dir, *model);
  Objective objective = experiment.build_objective(*model);
  objective.check_targets(loader.dataset().target_names(), split);
  return evaluate(*model, loader, objective, experiment.device(), split);
}

}  // namespace kiln::engine
