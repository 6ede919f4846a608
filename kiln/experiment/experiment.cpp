#include "kiln/experiment/experiment.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/ranges.h>

#include "kiln/core/usable_cpus.h"
#include "kiln/data/columns_dataset.h"
#include "kiln/data/partly_labelled.h"
#include "kiln/data/resident_dataset.h"
#include "kiln/data/subset.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/engine/device_feed.h"
#include "kiln/experiment/init_from.h"
#include "kiln/experiment/preprocessing_file.h"
#include "kiln/optim/param_groups.h"

namespace kiln::experiment {

Transforms build_transforms(const ComponentList& list) {
  Transforms transforms;
  for (const auto& spec : list.items) transforms.push_back(data::transform_registry().create(spec));
  return transforms;
}

Transforms eval_transforms(const ExperimentConfig& config) {
  return build_transforms(config.data.transforms.eval);
}

models::Inputs model_inputs_after(const Transforms& transforms, const models::Shape& example,
                                  torch::Dtype dtype, InputLayout layout) {
  if (transforms.empty()) return {example, std::move(layout)};
  torch::NoGradGuard no_grad;
  std::vector<int64_t> batch_shape = {1};
  batch_shape.insert(batch_shape.end(), example.begin(), example.end());
  torch::Tensor batch = torch::zeros(batch_shape, torch::TensorOptions().dtype(dtype));
  for (const auto& transform : transforms) batch = transform->apply(batch);
  return {batch.sizes().slice(1).vec(), std::move(layout)};
}

Experiment::Experiment(ExperimentConfig config, torch::Device device, int64_t rank, int64_t world,
                       ColumnFitting fitting)
    : config_(std::move(config)),
      device_(device),
      rank_(rank),
      world_(world),
      channels_last_(config_.runtime.channels_last == AutoSwitch::kOn),
      fitting_(std::move(fitting)) {}

std::vector<std::string> Experiment::splits() const {
  std::vector<std::string> out = {"train"};
  if (!config_.data.val.empty() || config_.data.val_fraction > 0) out.push_back("val");
  if (!config_.data.test.empty()) out.push_back("test");
  return out;
}

const ComponentSpec& Experiment::split_spec(const std::string& split) const {
  const ComponentSpec* spec = split == "train"  ? &config_.data.train
                              : split == "val"  ? &config_.data.val
                              : split == "test" ? &config_.data.test
                                                : nullptr;
  if (split == "train" && spec->empty())
    throw ConfigError("data.train", "",
                      "the training data is required: a dataset NAME or {type: NAME, ...}; it is "
                      "missing or null");
  if (!spec || spec->empty())
    throw UsageError(fmt::format("the config defines no \"{}\" split (data.{}); it has: {}", split,
                                 split, fmt::join(splits(), ", ")));
  return *spec;
}

bool Experiment::has_split(const std::string& split) const {
  std::vector<std::string> all = splits();
  return std::find(all.begin(), all.end(), split) != all.end();
}

void Experiment::carve_validation_split() {
  std::shared_ptr<const data::Dataset> whole =
      data::dataset_registry().create(with_derived("train", split_spec("train")));
  if (whole->as_streaming())
    throw ConfigError("data.val_fraction", "",
                      "a streamed dataset (tfrecord with cache: none) cannot be split; give "
                      "data.val, or use cache: records");
  auto [kept, carved] = data::carve_indices(whole->size(), config_.data.val_fraction,
                                            static_cast<uint64_t>(config_.seed));
  if (const data::TabularDataset* tabular = whole->as_tabular()) {
    torch::Tensor rows = kept.contiguous();
    auto training_rows = std::make_shared<tabular::RowsOf>(
        tabular->records(),
        std::vector<int64_t>(rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + rows.numel()));
    whole = with_columns(whole, "train", training_rows);
    // Rows the columns refused (on_corrupt: skip) leave both parts.
    if (auto columns = std::dynamic_pointer_cast<const data::ColumnsDataset>(whole)) {
      kept = data::indices_but(kept, columns->refused_rows());
      carved = data::indices_but(carved, columns->refused_rows());
    }
  }
  datasets_["train"] = std::make_shared<data::SubsetDataset>(whole, kept);
  datasets_["val"] = std::make_shared<data::SubsetDataset>(whole, carved);
}

ComponentSpec Experiment::with_derived(const std::string& split, ComponentSpec spec) const {
  const tabular::DerivedFeatures& derived = config_.data.derived;
  if (derived.empty()) return spec;
  if (spec.type() != "tfrecord" && spec.type() != "csv")
    throw ConfigError("data.derived", "",
                      fmt::format("derived features are computed over records of named features "
                                  "(tfrecord and csv datasets); data.{} is {}",
                                  split, spec.type()));
  if (spec.spec.is_object() && !spec.spec.value("derived", Json::object()).empty())
    throw ConfigError("data." + split + ".derived", "",
                      "give derived features once, in data.derived, for every split");
  spec.spec["derived"] = derived.json();
  return spec;
}

ComponentSpec Experiment::with_training_classes(const std::string& split, ComponentSpec spec) {
  bool named = spec.spec.is_object() && !spec.spec.value("classes", Json::array()).empty();
  if (split == "train" || spec.type() != "csv" || named) return spec;
  std::vector<std::string> classes = dataset("train")->info().class_names;
  if (!classes.empty()) spec.spec["classes"] = classes;
  return spec;
}

std::shared_ptr<const data::Dataset> Experiment::dataset(const std::string& split) {
  bool carved = config_.data.val_fraction > 0 && (split == "train" || split == "val");
  if (carved && !datasets_.count(split)) carve_validation_split();
  auto& slot = datasets_[split];
  if (!slot) {
    std::shared_ptr<const data::Dataset> made = data::dataset_registry().create(
        with_derived(split, with_training_classes(split, split_spec(split))));
    const data::TabularDataset* tabular = made->as_tabular();
    std::shared_ptr<const tabular::TabularSource> records;
    if (split == "train" && tabular) records = {made, &tabular->records()};
    slot = data::without_refused(with_columns(made, split, records));
  }
  if (split == "train" && !took_training_range_) {
    slot = data::take_range(slot, config_.data.skip, config_.data.take, "data");
    slot = data::partly_labelled(slot, config_.data.labels_per_class, config_.data.labelled_share,
                                 static_cast<uint64_t>(config_.seed), "data");
    took_training_range_ = true;
  }
  return slot;
}

namespace {

// Where a split's feature columns are listed: data.SPLIT.input, or .inputs for named parts.
std::string input_key(const std::string& split, const tabular::InputGroups& groups) {
  return "data." + split + (groups.named ? ".inputs" : ".input");
}

// The passes over tabular records (fitting, checking) run on every core.
int64_t pass_threads() { return int64_t(usable_cpus().count); }

std::string groups_text(const tabular::InputGroups& groups) {
  if (!groups.named) return "[" + fmt::format("{}", fmt::join(groups.columns(), ", ")) + "]";
  return show_value(groups.json());
}

}  // namespace

ColumnFitting saved_columns(const std::string& run_path) {
  ColumnFitting fitting;
  fitting.saved = read_preprocessing(run_path);
  return fitting;
}

std::shared_ptr<const data::Dataset> Experiment::with_columns(
    std::shared_ptr<const data::Dataset> made, const std::string& split,
    std::shared_ptr<const tabular::TabularSource> fit_on) {
  const data::TabularDataset* tabular = made->as_tabular();
  if (!tabular) {
    if (split == "train" && !config_.data.columns.items.empty())
      throw ConfigError("data.columns", "",
                        "feature columns need a list of inputs: give data.train a list, e.g. "
                        "input: [" +
                            config_.data.columns.items.begin()->first + ", ...]");
    return made;
  }
  if (!columns_ && split != "train") dataset("train");
  if (!columns_) {
    if (!fit_on)
      throw ConfigError("data.train.input", "",
                        "data." + split + " reads feature columns; so must data.train");
    auto columns = std::make_shared<tabular::FeatureColumns>(
        config_.data.columns, tabular->input_groups(), input_key("train", tabular->input_groups()),
        "data.columns", config_.data.derived);
    auto fit = [&] {
      // Even with nothing to learn the pass runs once: it finds the features no record has.
      if (fitting_.saved.is_null()) {
        columns->fit(*fit_on, pass_threads(), tabular->skips_corrupt());
        for (const std::string& warning : columns->warnings())
          std::fprintf(stderr, "kiln: warning: %s\n", warning.c_str());
      }
      return fitting_.saved.is_null() ? columns->preprocessing() : fitting_.saved;
    };
    Json fitted = fitting_.share ? fitting_.share(fit) : fit();
    columns->restore(fitted);
    columns_ = std::move(columns);
    training_records_ = std::move(fit_on);
  }
  tabular::InputGroups groups = tabular->input_groups();
  if (groups != columns_->groups())
    throw ConfigError(
        input_key(split, groups), "",
        fmt::format("{} differs from data.train's {} {}: every split feeds "
                    "the model the same columns",
                    groups_text(groups), columns_->groups().named ? "inputs" : "input",
                    groups_text(columns_->groups())));
  // Each split counts the values its vocabularies lack on a copy of its own.
  std::shared_ptr<const tabular::FeatureColumns> columns = columns_;
  if (split != "train") columns = tabular::FeatureColumns::from_preprocessing(preprocessing());
  return std::make_shared<data::ColumnsDataset>(std::move(made), columns, pass_threads());
}

Json Experiment::preprocessing() const { return columns_ ? columns_->preprocessing() : Json(); }

std::shared_ptr<const tabular::TabularSource> Experiment::training_records() {
  dataset("train");
  return training_records_;
}

int64_t Experiment::job_batch() const {
  return config_.data.batch_per_rank ? config_.data.batch_size * world_ : config_.data.batch_size;
}

// A rank's training batch: its share of the global batch, unless data.batch_per_rank.
int64_t Experiment::batch_per_rank() const {
  const data::DataOptions& d = config_.data;
  if (d.batch_per_rank || world_ == 1) return d.batch_size;
  if (d.batch_size % world_ != 0)
    throw ConfigError("data.batch_size", "",
                      fmt::format("{} examples do not split evenly among {} ranks: give a "
                                  "multiple of {}, or set data.batch_per_rank: true to make it "
                                  "each rank's batch",
                                  d.batch_size, world_, world_));
  return d.batch_size / world_;
}

data::Loader Experiment::loader(const std::string& split) {
  const data::DataOptions& d = config_.data;
  bool training = split == "train";
  data::LoaderOptions options;
  options.batch_size = training || d.eval_batch_size == 0 ? batch_per_rank() : d.eval_batch_size;
  options.rank = rank_;
  options.world = world_;
  options.equal_shards = training;
  options.shuffle = training && d.shuffle;
  options.drop_last = training && d.drop_last;
  options.seed = static_cast<uint64_t>(config_.seed);
  options.workers = d.workers;
  options.prefetch = d.prefetch;
  options.deliver = engine::device_feed(device_, {config_.runtime.pin_memory, channels_last_});
  return data::Loader(loaded(split),
                      build_transforms(training ? d.transforms.train : d.transforms.eval), options);
}

std::shared_ptr<const data::Dataset> Experiment::loaded(const std::string& split) {
  if (config_.data.cache == data::DataCache::kNone) return dataset(split);
  auto& resident = resident_[split];
  if (!resident) resident = data::resident_on(dataset(split), device_, "data.cache", split);
  return resident;
}

std::shared_ptr<models::Model> Experiment::build_model(const std::string& split) {
  auto data = dataset(split);
  // Built for what evaluation and serving give it: training may crop smaller (a model that pools
  // globally takes both), and a model that needs one size fails its first training batch.
  models::Inputs seen = model_inputs_after(eval_transforms(config_), data->input_shape(),
                                           data->input_dtype(), data->info().input_layout);
  auto model = models::build_model(config_.model.network, seen);
  models::freeze(*model, config_.train.freeze, "train.freeze");
  model->to(device_);
  if (channels_last_) engine::make_channels_last(*model);
  return model;
}

std::string Experiment::initialize_model(models::Model& model) const {
  if (!config_.model.init_from) return "";
  return init_report_text(load_initial_weights(*config_.model.init_from, model));
}

namespace {

std::vector<engine::NamedMetric> build_metrics(const ComponentList& specs) {
  std::vector<engine::NamedMetric> out;
  for (const auto& spec : specs.items)
    out.push_back({spec.type(), metrics::metric_registry().create(spec)});
  return out;
}

}  // namespace

engine::Objective Experiment::build_objective(const models::Model& model) const {
  std::vector<engine::Objective::Head> heads;
  for (const models::HeadSpec& head : model.heads())
    heads.push_back({head.name, losses::loss_registry().create(head.loss), head.weight,
                     build_metrics(head.metrics), head.target, head.config_path()});
  if (heads.empty())
    heads.push_back({"", losses::loss_registry().create(config_.loss), 1.0,
                     build_metrics(config_.metrics), "target", ""});
  return engine::Objective(std::move(heads));
}

std::unique_ptr<optim::Scheduler> Experiment::build_scheduler(
    const optim::ScheduleSpan& span) const {
  optim::ScheduleSpan with_monitor = span;
  with_monitor.monitor = config_.train.monitor;
  with_monitor.mode = config_.train.mode;
  return optim::scheduler_registry().create(config_.scheduler, with_monitor);
}

std::map<std::string, std::unique_ptr<optim::Scheduler>> Experiment::build_hyper_schedules(
    const optim::ScheduleSpan& span) const {
  std::map<std::string, std::unique_ptr<optim::Scheduler>> schedules;
  for (const auto& [name, spec] : config_.schedules.items)
    schedules[name] = optim::scheduler_registry().create(spec, span);
  return schedules;
}

engine::Regularization Experiment::build_regularization(const models::Model& model) const {
  std::vector<engine::RegularizerEntry> entries;
  for (const auto& spec : config_.regularization.items)
    entries.push_back({losses::regularizer_registry().create(spec), spec.path});
  return engine::Regularization(std::move(entries), model.named_parameters());
}

std::vector<std::unique_ptr<engine::Callback>> Experiment::build_callbacks() const {
  std::vector<std::unique_ptr<engine::Callback>> callbacks;
  for (const auto& spec : config_.callbacks.items) {
    callbacks.push_back(engine::callback_registry().create(spec));
    callbacks.back()->type = spec.type();
    callbacks.back()->config_path = spec.path;
  }
  return callbacks;
}

std::unique_ptr<torch::optim::Optimizer> Experiment::build_optimizer(models::Model& model) const {
  return optim::build_grouped_optimizer(config_.optimizer, model.named_parameters(),
                                        config_.train.lr_scales, "train.lr_scales",
                                        config_.train.weight_decay_scales);
}

engine::Runtime runtime_of(const ExperimentConfig& config, int64_t local_ranks) {
  return engine::Runtime::of(config.runtime, config.seed, config.train.deterministic, local_ranks);
}

}  // namespace kiln::experiment
