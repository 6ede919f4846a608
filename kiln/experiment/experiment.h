#pragma once
// An experiment assembled from its config: the only place that turns component specs into
// objects through the registries (docs/design.md §2). Commands (train, eval) build one and hand its
// parts to the trainer and evaluator.
// Thread-safety: built and used on one thread.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/data/loader.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/objective.h"
#include "kiln/engine/regularization.h"
#include "kiln/engine/runtime.h"
#include "kiln/experiment/experiment_config.h"
#include "kiln/losses/loss.h"
#include "kiln/metrics/metric.h"
#include "kiln/models/model.h"
#include "kiln/optim/scheduler.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::experiment {

using Transforms = std::vector<std::shared_ptr<const data::Transform>>;

/// The transforms a list of specs names, in order.
Transforms build_transforms(const ComponentList& list);
/// The transforms the config applies to examples outside training (validation, test, serving).
Transforms eval_transforms(const ExperimentConfig& config);
/// What a model over examples of `example` (shape and dtype, as a dataset, inputs.json or a
/// signature gives them) is built for: the shape the model sees once `transforms` have run, which
/// a resize changes. Found by running them on one example of zeros.
models::Inputs model_inputs_after(const Transforms& transforms, const models::Shape& example,
                                  torch::Dtype dtype, InputLayout layout = {});

/// Where fitted feature columns (data.columns) come from: a run's preprocessing.json (`saved`:
/// resume, eval, export), or the training split. In a job, `share(fit)` runs fit() on rank 0 and
/// returns its preprocessing.json on every rank; without it each process fits for itself.
struct ColumnFitting {
  Json saved;
  std::function<Json(const std::function<Json()>& fit)> share;
};

/// The columns a run fitted (its preprocessing.json), for commands that read a run; nothing to
/// reuse when it has none.
ColumnFitting saved_columns(const std::string& run_path);

class Experiment {
 public:
  /// Builds on `device` (runtime_of(config).device); the runtime is the command's to apply.
  /// In a distributed job, loaders give rank `rank` of `world` its share of each split: training
  /// batches of data.batch_size / world examples (data.batch_size each with
  /// data.batch_per_rank), evaluation over every example once between the ranks; a batch that
  /// does not split evenly is a ConfigError at data.batch_size when a loader is made.
  Experiment(ExperimentConfig config, torch::Device device, int64_t rank = 0, int64_t world = 1,
             ColumnFitting fitting = {});

  const ExperimentConfig& config() const { return config_; }
  /// Switches to a later train cycle's config (stages.h), keeping the datasets already made and
  /// the device: a stage may change neither.
  void use_stage_config(ExperimentConfig config) { config_ = std::move(config); }
  torch::Device device() const { return device_; }
  /// Whether models and the loaders' batches are stored channels-last: runtime.channels_last
  /// when true or false; for auto, false until the run decides (channels_last_choice.h).
  bool channels_last() const { return channels_last_; }
  /// The decision for auto: models built and loaders made from now on follow it (the caller
  /// stores a model already built).
  void use_channels_last(bool channels_last) { channels_last_ = channels_last; }
  /// The examples of one step of the whole job: data.batch_size, times the ranks when it is each
  /// rank's (data.batch_per_rank).
  int64_t job_batch() const;

  /// The dataset of a split: train, val or test. Throws UsageError when the config has none.
  std::shared_ptr<const data::Dataset> dataset(const std::string& split);
  /// A loader over a split; training loaders shuffle and use the train transforms.
  data::Loader loader(const std::string& split);
  /// What a loader of `split` reads: its dataset, or with data.cache: device its examples held on
  /// the device (made once).
  std::shared_ptr<const data::Dataset> loaded(const std::string& split);
  /// Builds the model for the examples of `split`, on the device.
  std::shared_ptr<models::Model> build_model(const std::string& split);
  /// Loads model.init_from into a model about to train; the report line, or "" without it.
  std::string initialize_model(models::Model& model) const;
  /// The loss and metrics, fresh: the config's top-level ones, or the heads' of a multi_head
  /// model.
  engine::Objective build_objective(const models::Model& model) const;
  std::unique_ptr<torch::optim::Optimizer> build_optimizer(models::Model& model) const;
  /// The `regularization:` entries over the model's trainable parameters (freeze first).
  engine::Regularization build_regularization(const models::Model& model) const;
  /// The learning-rate schedule; its default monitor is train.monitor (and train.mode).
  std::unique_ptr<optim::Scheduler> build_scheduler(const optim::ScheduleSpan& span) const;
  /// The `schedules:` of other hyper-parameters, by name; their errors name schedules.NAME.
  std::map<std::string, std::unique_ptr<optim::Scheduler>> build_hyper_schedules(
      const optim::ScheduleSpan& span) const;
  /// The config's callbacks, each knowing its type and config path.
  std::vector<std::unique_ptr<engine::Callback>> build_callbacks() const;
  /// The splits this config defines: train, then val and test when it has them.
  std::vector<std::string> splits() const;
  bool has_split(const std::string& split) const;
  /// The fitted feature columns as preprocessing.json; null when the inputs take none (or no
  /// dataset was made yet).
  Json preprocessing() const;
  /// The records of the training split (the part data.val_fraction keeps) when its inputs are
  /// tabular, what the columns are fitted on; null otherwise. Makes the training split.
  std::shared_ptr<const tabular::TabularSource> training_records();

 private:
  const ComponentSpec& split_spec(const std::string& split) const;
  /// A csv split other than the training one, given the training split's text classes unless it
  /// names its own (`classes`): the ids of a class must not depend on which classes a file has.
  ComponentSpec with_training_classes(const std::string& split, ComponentSpec spec);
  /// A tfrecord or csv split given data.derived (the dataset computes them into each record); any
  /// other kind of split with data.derived is a ConfigError.
  ComponentSpec with_derived(const std::string& split, ComponentSpec spec) const;
  int64_t batch_per_rank() const;
  /// Train and val as two parts of data.train (data.val_fraction).
  void carve_validation_split();
  /// `made` itself, or, when its inputs are tabular, `made` read through the feature columns
  /// (fitted on `fit_on`, the training split's records, the first time).
  std::shared_ptr<const data::Dataset> with_columns(
      std::shared_ptr<const data::Dataset> made, const std::string& split,
      std::shared_ptr<const tabular::TabularSource> fit_on);

  ExperimentConfig config_;
  torch::Device device_;
  std::map<std::string, std::shared_ptr<const data::Dataset>> datasets_;
  // data.cache: device: each split's examples held on the device, made when first loaded.
  std::map<std::string, std::shared_ptr<const data::Dataset>> resident_;
  int64_t rank_, world_;
  bool channels_last_;
  bool took_training_range_ = false;  // data.skip and data.take applied to datasets_["train"]
  ColumnFitting fitting_;
  std::shared_ptr<const tabular::FeatureColumns> columns_;  // made with the training split
  std::shared_ptr<const tabular::TabularSource> training_records_;
};

/// The runtime `config` asks for: its `runtime:`, `seed` and `train.deterministic`.
engine::Runtime runtime_of(const ExperimentConfig& config, int64_t local_ranks = 1);

}  // namespace kiln::experiment
