#pragma once
// What `kiln train` builds from a config, in two lifetimes. The run's part (the experiment with its
// datasets and device, and the model) lives for the whole run, so a model's weights carry from
// one train cycle (stage, stages.h) to the next. Each stage builds its own part from its config
// over that model: optimizer (fresh state), schedule (spanning the stage), loss and metrics,
// loaders (its batch size and transforms) and callbacks, and it freezes what its config lists.
// Thread-safety: built and used on the training thread.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/engine/loop.h"
#include "kiln/engine/regularization.h"
#include "kiln/engine/trainer.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"
#include "kiln/experiment/stages.h"

namespace kiln::experiment {

struct RunSession {
  Experiment experiment;
  std::vector<ModelInput> inputs;   // what the model takes: the training data's examples
  std::vector<std::string> labels;  // the training data's class names, when it has them
  std::shared_ptr<models::Model> model;
  std::string init_report;  // what model.init_from loaded, "" without it

  /// Builds the model for the first stage's config on `device` and loads model.init_from into
  /// it. The model's initial weights come from the config's seed, whatever was drawn before.
  /// In a distributed job, rank `rank` of `world` (the Experiment's share of the data).
  RunSession(const ExperimentConfig& first_stage, torch::Device device, int64_t rank = 0,
             int64_t world = 1, ColumnFitting fitting = {});
};

struct StageSession {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<optim::Scheduler> scheduler;
  std::map<std::string, std::unique_ptr<optim::Scheduler>> schedules;  // `schedules:`
  engine::Objective objective, val_objective;
  engine::Regularization regularization;  // over the parameters this stage trains
  data::Loader train;
  std::optional<data::Loader> val;
  std::vector<std::unique_ptr<engine::Callback>> callbacks;
  std::unique_ptr<engine::Loop> loop;

  /// Over `run`, whose experiment already holds `config` and whose model is frozen for it.
  StageSession(RunSession& run, const ExperimentConfig& config);

  engine::TrainerParts parts(RunSession& run, const std::string& checkpoints_dir,
                             const std::string& config_yaml, const std::atomic<int>* stop_signal,
                             const engine::StageMark& stage);
};

/// Switches `run` to `stage` (its config, its frozen parameters) and builds the stage's part;
/// config errors name the stage's keys (stages[i].train.freeze[0]).
std::unique_ptr<StageSession> open_stage(RunSession& run, const Stage& stage);

/// Opens every stage in turn and makes a trainer's checks of it (the run is then in the last
/// one: open the one to train next), so that a config which would fail only when a later stage
/// starts (a freeze path, a schedule longer than its stage, a monitor never measured) fails
/// before any training; --dry-run makes these checks for every config.
void check_stages(RunSession& run, const std::vector<Stage>& stages);

}  // namespace kiln::experiment
