#pragma once
// The top-level config of an experiment (docs/design.md §4) as options structs: every key, its
// default and its checks are declared once, each section beside what reads it (`data:` in
// data/data_options.h, `train:` and `runtime:` in engine/, `tensorboard:` in
// engine/tensorboard_options.h), and put together here with the sections only a whole experiment
// reads: the model, loss, metrics, optimizer, schedules and stages. The resolved form (every
// default filled in) is what a run directory and every checkpoint store. Thread-safety: values.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/core/config_section.h"
#include "kiln/core/registry.h"
#include "kiln/data/data_options.h"
#include "kiln/engine/runtime_options.h"
#include "kiln/engine/tensorboard_options.h"
#include "kiln/engine/train_options.h"

namespace kiln::experiment {

/// `model.init_from`: weights to start from, by name.
struct InitFrom {
  std::string path;
  std::map<std::string, std::string> map;
  bool strict = true;
  void describe(Schema& s);
};

/// The `model` section: the network (a model component) and, optionally, `init_from`.
struct ModelSection {
  ComponentSpec network{"model"};
  std::optional<InitFrom> init_from;
};

/// `schedules:` per-epoch schedules of optimizer hyper-parameters other than the learning rate,
/// by hyper-parameter name (`weight_decay: cosine`); each a scheduler component.
struct HyperSchedules {
  std::map<std::string, ComponentSpec> items;
};

/// The hyper-parameters `schedules:` may name for some optimizer (which ones a run's optimizer
/// has is checked when training starts).
const std::vector<std::string>& schedulable_names();

/// `stages`: train cycles, each a mapping of the keys it changes over the previous stage's config
/// plus its `name` (filled in as `stage<N>` when absent). Kept as written: stages.h merges and
/// checks each one.
struct StageList {
  Json entries = Json::array();
};

struct ExperimentConfig {
  int64_t version = 1;
  std::string name = "experiment";
  int64_t seed = 1;
  data::DataOptions data;
  ModelSection model;
  ComponentSpec loss{"loss", "cross_entropy"};
  ComponentList metrics{"metric", {"accuracy"}};
  ComponentList regularization{"regularizer"};
  ComponentSpec optimizer{"optimizer", "adam"};
  ComponentSpec scheduler{"scheduler", "constant"};
  HyperSchedules schedules;
  engine::TrainOptions train;
  ComponentSpec loop{"loop", "supervised"};
  ComponentList callbacks{"callback"};
  StageList stages;
  engine::RuntimeOptions runtime;
  engine::TensorBoardOptions tensorboard;
  ConfigSections sections;  // registered by other folders (tune:); read and checked here
  void describe(Schema& s);
};

/// Checks a merged config against the declaration; throws ConfigError naming path and origin.
ExperimentConfig parse_experiment(const RawConfig& raw);

/// The resolved config: the input with every default filled in.
Json resolved_config(const ExperimentConfig& config);

/// Keys a `--set` may change when a run is resumed (train.max, ...): they change neither the
/// model nor how the steps taken so far were computed.
const std::vector<std::string>& resumable_keys();

}  // namespace kiln::experiment

namespace kiln {
template <>
struct OptionTraits<experiment::ModelSection> {
  static void read(const Json& value, experiment::ModelSection& out, const ReadContext& ctx);
  static Json write(const experiment::ModelSection& value);
  static std::string type_name(const experiment::ModelSection&) { return "model"; }
};

template <>
struct OptionTraits<experiment::HyperSchedules> {
  static void read(const Json& value, experiment::HyperSchedules& out, const ReadContext& ctx);
  static Json write(const experiment::HyperSchedules& value);
  static std::string type_name(const experiment::HyperSchedules&) {
    return "mapping of hyper-parameter to scheduler";
  }
};

template <>
struct OptionTraits<experiment::StageList> {
  static void read(const Json& value, experiment::StageList& out, const ReadContext& ctx);
  static Json write(const experiment::StageList& value) { return value.entries; }
  static std::string type_name(const experiment::StageList&) { return "list of stages"; }
};
}  // namespace kiln
