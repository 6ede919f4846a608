#include "kiln/experiment/training_session.h"

#include "kiln/experiment/training_loop.h"

namespace kiln::experiment {

namespace {

// Seeds the global generator, then reads the training data's example shape: the data (a
// synthetic set may draw from that generator) and the model's initial weights come from the
// config's seed alone, also when the checks before training built a model first.
std::vector<ModelInput> seed_then_inputs(Experiment& experiment) {
  torch::manual_seed(static_cast<uint64_t>(experiment.config().seed));
  return model_inputs(*experiment.dataset("train"));
}

}  // namespace

RunSession::RunSession(const ExperimentConfig& first_stage, torch::Device device, int64_t rank,
                       int64_t world, ColumnFitting fitting)
    : experiment(first_stage, device, rank, world, std::move(fitting)),
      inputs(seed_then_inputs(experiment)),
      labels(experiment.dataset("train")->info().class_names),
      model(experiment.build_model("train")),
      init_report(experiment.initialize_model(*model)) {}

StageSession::StageSession(RunSession& run, const ExperimentConfig& config)
    : optimizer(run.experiment.build_optimizer(*run.model)),
      objective(run.experiment.build_objective(*run.model)),
      val_objective(run.experiment.build_objective(*run.model)),
      regularization(run.experiment.build_regularization(*run.model)),
      train(run.experiment.loader("train")),
      callbacks(run.experiment.build_callbacks()),
      loop(build_loop(run.experiment, *run.model, run.inputs)) {
  if (run.experiment.has_split("val")) val.emplace(run.experiment.loader("val"));
  objective.check_targets(train.dataset().info().target_names, "train");
  if (val) objective.check_targets(val->dataset().info().target_names, "val");
  // The schedule spans this stage: it sees the steps since the stage began.
  int64_t accumulate = config.train.accumulate;
  optim::ScheduleSpan span{engine::planned_steps(config.train.max, train, accumulate),
                           engine::steps_per_epoch(train, accumulate),
                           run.experiment.job_batch() * accumulate};
  scheduler = run.experiment.build_scheduler(span);
  schedules = run.experiment.build_hyper_schedules(span);
}

engine::TrainerParts StageSession::parts(RunSession& run, const std::string& checkpoints_dir,
                                         const std::string& config_yaml,
                                         const std::atomic<int>* stop_signal,
                                         const engine::StageMark& stage) {
  std::vector<engine::Callback*> hooks;
  for (auto& callback : callbacks) hooks.push_back(callback.get());
  engine::TrainerParts parts{*run.model,
                             *optimizer,
                             objective,
                             train,
                             val ? &*val : nullptr,
                             run.experiment.device(),
                             &val_objective,
                             scheduler.get(),
                             hooks,
                             checkpoints_dir,
                             config_yaml,
                             stop_signal};
  parts.stage = stage;
  parts.loop = loop.get();
  if (!regularization.empty()) parts.regularization = &regularization;
  for (const auto& [name, schedule] : schedules) parts.schedules[name] = schedule.get();
  return parts;
}

std::unique_ptr<StageSession> open_stage(RunSession& run, const Stage& stage) {
  try {
    run.experiment.use_stage_config(stage.config);
    models::unfreeze(*run.model);
    models::freeze(*run.model, stage.config.train.freeze, "train.freeze");
    return std::make_unique<StageSession>(run, stage.config);
  } catch (const ConfigError& e) {
    throw stage.locate(e);
  }
}

void check_stages(RunSession& run, const std::vector<Stage>& stages) {
  for (const Stage& stage : stages) {
    std::unique_ptr<StageSession> session = open_stage(run, stage);
    try {
      check_training(session->parts(run, "", "", nullptr, {}), stage.config.train);
    } catch (const ConfigError& e) {
      throw stage.locate(e);
    }
  }
}

}  // namespace kiln::experiment
