#pragma once
// The top-level config of an experiment (docs/design.md §4) as options structs: every key, its
// default and its checks are declared here once, and the resolved form (every default filled in) is
// what a run directory and every checkpoint store. Thread-safety: values.

#include <map>
#include <optional>
#include <string>

#include "kiln/core/config.h"
#include "kiln/core/config_section.h"
#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/registry.h"
#include "kiln/engine/tensorboard_options.h"
#include "kiln/tabular/derived_features.h"

namespace kiln::engine {

/// A count that may be `auto` (0 in memory).
struct AutoCount {
  int64_t value = 0;
};

/// A switch that may be left to the machine: `auto`, true or false.
enum class AutoSwitch { kAuto, kOn, kOff };

struct TransformLists {
  ComponentList train{"transform"};
  ComponentList eval{"transform"};
  void describe(Schema& s);
};

/// Where a split's examples are held between epochs (data.cache).
enum class DataCache { kNone, kDevice };
inline EnumNameList<DataCache> enum_names(DataCache) {
  return {{DataCache::kNone, "none"}, {DataCache::kDevice, "device"}};
}

struct DataOptions {
  ComponentSpec train{"dataset"};
  ComponentSpec val{"dataset"};
  ComponentSpec test{"dataset"};
  int64_t batch_size = 128;
  double val_fraction = 0.0;
  int64_t eval_batch_size = 0;
  bool shuffle = true;
  bool drop_last = false;
  bool batch_per_rank = false;
  int64_t workers = 2;
  int64_t prefetch = 4;
  DataCache cache = DataCache::kNone;
  int64_t skip = 0;
  int64_t take = 0;
  TransformLists transforms;
  ComponentMap columns{"column"};
  tabular::DerivedFeatures derived;
  void describe(Schema& s);
};

/// What train.on_nan does with a step whose loss or gradients are not finite.
enum class OnNan { kStop, kSkipStep, kRewind };
inline EnumNameList<OnNan> enum_names(OnNan) {
  return {{OnNan::kStop, "stop"}, {OnNan::kSkipStep, "skip_step"}, {OnNan::kRewind, "rewind"}};
}

/// train.precision: the float type of the forward pass; kAuto is chosen from the hardware
/// (precision_choice.h). kScaledFp32ForTests is for tests alone (configs cannot name it):
/// float32 with fp16's loss scaling, so that machines without CUDA test the trainer's scaling.
enum class PrecisionMode { kFp32, kBf16, kFp16, kAuto, kScaledFp32ForTests };
inline EnumNameList<PrecisionMode> enum_names(PrecisionMode) {
  return {{PrecisionMode::kFp32, "fp32"},
          {PrecisionMode::kBf16, "bf16"},
          {PrecisionMode::kFp16, "fp16"},
          {PrecisionMode::kAuto, "auto"}};
}

/// runtime.device.
enum class DeviceChoice { kAuto, kCpu, kCuda };
inline EnumNameList<DeviceChoice> enum_names(DeviceChoice) {
  return {
      {DeviceChoice::kAuto, "auto"}, {DeviceChoice::kCpu, "cpu"}, {DeviceChoice::kCuda, "cuda"}};
}

/// `train.profile`: the steps whose phases and layers RUN/trace.json shows (step_profiler.h).
struct ProfileWindow {
  int64_t from = 1, to = 10;
  void describe(Schema& s);
};

struct TrainOptions {
  Period max{10, Period::Unit::kEpochs};
  Period validate_every{1, Period::Unit::kEpochs};
  Period log_every{100, Period::Unit::kSteps};
  std::string monitor = "val/loss";
  Mode mode = Mode::kMin;
  std::vector<std::string> freeze;
  std::map<std::string, double> lr_scales;
  std::map<std::string, double> weight_decay_scales;
  bool deterministic = false;
  int64_t val_steps = 0;
  int64_t accumulate = 1;
  double clip_norm = 0;
  double clip_value = 0;
  OnNan on_nan = OnNan::kStop;
  std::optional<double> stop_at;
  PrecisionMode precision = PrecisionMode::kFp32;
  std::optional<ProfileWindow> profile;
  void describe(Schema& s);
};

/// `runtime.distributed`: how the ranks of a job (docs/distributed.md) meet and talk.
struct DistributedOptions {
  double timeout = 300;          // seconds
  double bucket_mb = 25;         // gradients all-reduced together
  bool overlap = true;           // each bucket's exchange starts while backward still runs
  bool sync_batch_norm = false;  // training batches normalized by the job's statistics
  void describe(Schema& s);
};

struct RuntimeOptions {
  DeviceChoice device = DeviceChoice::kAuto;
  AutoCount threads;
  bool pin_memory = true;  // CUDA: batches copied from page-locked memory on a side stream
  AutoSwitch channels_last = AutoSwitch::kAuto;  // images and convolution kernels stored NHWC
  bool cudnn_benchmark = false;                  // cuDNN times its convolution algorithms per shape
  DistributedOptions distributed;
  void describe(Schema& s);
};

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
  DataOptions data;
  ModelSection model;
  ComponentSpec loss{"loss", "cross_entropy"};
  ComponentList metrics{"metric", {"accuracy"}};
  ComponentList regularization{"regularizer"};
  ComponentSpec optimizer{"optimizer", "adam"};
  ComponentSpec scheduler{"scheduler", "constant"};
  HyperSchedules schedules;
  TrainOptions train;
  ComponentList callbacks{"callback"};
  StageList stages;
  RuntimeOptions runtime;
  TensorBoardOptions tensorboard;
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

}  // namespace kiln::engine

namespace kiln {
template <>
struct OptionTraits<engine::ModelSection> {
  static void read(const Json& value, engine::ModelSection& out, const ReadContext& ctx);
  static Json write(const engine::ModelSection& value);
  static std::string type_name(const engine::ModelSection&) { return "model"; }
};

template <>
struct OptionTraits<engine::HyperSchedules> {
  static void read(const Json& value, engine::HyperSchedules& out, const ReadContext& ctx);
  static Json write(const engine::HyperSchedules& value);
  static std::string type_name(const engine::HyperSchedules&) {
    return "mapping of hyper-parameter to scheduler";
  }
};

template <>
struct OptionTraits<engine::StageList> {
  static void read(const Json& value, engine::StageList& out, const ReadContext& ctx);
  static Json write(const engine::StageList& value) { return value.entries; }
  static std::string type_name(const engine::StageList&) { return "list of stages"; }
};

template <>
struct OptionTraits<engine::AutoSwitch> {
  static void read(const Json& value, engine::AutoSwitch& out, const ReadContext& ctx);
  static Json write(engine::AutoSwitch value);
  static std::string type_name(engine::AutoSwitch) { return "auto | true | false"; }
};

template <>
struct OptionTraits<engine::AutoCount> {
  static void read(const Json& value, engine::AutoCount& out, const ReadContext& ctx);
  static Json write(const engine::AutoCount& value);
  static std::string type_name(const engine::AutoCount&) { return "auto | integer"; }
};
}  // namespace kiln
