#include "kiln/experiment/experiment_config.h"

#include <algorithm>
#include <set>

#include "kiln/core/suggest.h"

namespace kiln::experiment {

void InitFrom::describe(Schema& s) {
  s.field("path", path,
          "A run directory (its best checkpoint, else the last), a checkpoint directory or a "
          ".safetensors file.")
      .check([](const std::string& p) { return !p.empty(); }, "non-empty")
      .require();
  s.field("map", map,
          "Renames by prefix, source to model ({\"backbone.\": \"encoder.\"}); when given, only "
          "tensors under a mapped prefix load.");
  s.field("strict", strict,
          "Fail when a model tensor gets no value or a source tensor has no place; false loads "
          "what matches and reports the rest.");
}

void ExperimentConfig::describe(Schema& s) {
  s.field("version", version, "Config format version.").in_range(1, 1);
  s.field("name", name, "Experiment name: runs land in <runs-root>/<name>/<timestamp>.")
      .check(
          [](const std::string& n) {
            return !n.empty() && n.find('/') == std::string::npos && n != "." && n != "..";
          },
          "that is non-empty and has no '/'");
  s.field("seed", seed, "Seed for weights, shuffling and dropout.").min(0);
  s.field("data", data, "Datasets, batching and transforms.");
  s.field("model", model, "The network.").require();
  s.field("loss", loss, "The training objective.");
  s.field("metrics", metrics, "Measured on every evaluation, besides the loss.");
  s.field("regularization", regularization,
          "Penalties on chosen parameters (l1, l2) added to the training loss; logged apart "
          "from it as train/regularization.");
  s.field("optimizer", optimizer, "The parameter update rule.");
  s.field("scheduler", scheduler, "How the learning rate changes over training.");
  s.field("schedules", schedules,
          "Per-epoch schedules of the optimizer's other hyper-parameters (weight_decay, "
          "momentum, dampening, beta1, beta2, eps, alpha, lr_decay: what the optimizer has): "
          "each a scheduler whose factor multiplies the configured value.");
  s.field("train", train, "Length of training, validation and logging periods.");
  s.field("loop", loop,
          "What a training step computes: supervised (the config's loss), mean_teacher "
          "(semi-supervised) or distillation from a teacher run (kiln list loop).");
  s.field("callbacks", callbacks,
          "Optional behaviour: checkpoint, early_stopping, ema, lr_monitor (one of each type).");
  s.field("stages", stages,
          "Train cycles run one after another on the same weights: each entry ({name: "
          "finetune, optimizer: {lr: 1.0e-4}, train: {max: 5 epochs, freeze: []}}) deep-merges "
          "over the previous stage's config; [] trains once with the config as it is.");
  s.field("runtime", runtime, "Device and threads.");
  s.field("tensorboard", tensorboard,
          "TensorBoard event files: scalars, text, hyper-parameters, histograms; false: none.");
  describe_config_sections(s, sections);
}

ExperimentConfig parse_experiment(const RawConfig& raw) {
  ExperimentConfig config;
  ReadContext root{"", &raw.origins};
  read_options(config, raw.tree, root);
  if (config.data.val_fraction > 0 && !config.data.val.empty())
    root.child("data").child("val_fraction").fail("give data.val or data.val_fraction, not both");
  // A multi_head model's heads carry their own losses and metrics; top-level ones would be
  // silently unused.
  if (config.model.network.type() == "multi_head")
    for (const char* key : {"loss", "metrics"})
      if (raw.tree.contains(key))
        root.child(key).fail(std::string("a multi_head model gives each head its own ") + key +
                             " (model.heads[i]." + key + "); remove the top-level one");
  std::set<std::string> callback_types;
  for (const auto& callback : config.callbacks.items)
    if (!callback_types.insert(callback.type()).second)
      throw ConfigError(callback.path, "",
                        "a second " + callback.type() + " callback; give each type once");
  return config;
}

const std::vector<std::string>& schedulable_names() {
  static const std::vector<std::string> names = {"alpha", "beta1",    "beta2",    "dampening",
                                                 "eps",   "lr_decay", "momentum", "weight_decay"};
  return names;
}

const std::vector<std::string>& resumable_keys() {
  static const std::vector<std::string> keys = {
      "train.max", "train.log_every", "train.validate_every", "data.workers", "data.prefetch",
      "data.cache", "data.eval_batch_size", "runtime.device", "runtime.threads",
      "runtime.pin_memory", "runtime.distributed", "runtime.distributed.timeout",
      "runtime.distributed.bucket_mb", "runtime.distributed.overlap",
      // What is logged, not what is computed.
      "tensorboard", "tensorboard.enabled", "tensorboard.scalars", "tensorboard.text",
      "tensorboard.hparams", "tensorboard.histograms", "tensorboard.histograms_every",
      "tensorboard.images", "tensorboard.max_images", "tensorboard.projector",
      "tensorboard.projector.enabled", "tensorboard.projector.layer",
      "tensorboard.projector.max_examples", "train.profile", "train.profile.from",
      "train.profile.to"};
  return keys;
}

Json resolved_config(const ExperimentConfig& config) {
  Json resolved = write_options(config);
  if (config.model.network.type() == "multi_head") {
    // The heads hold the losses and metrics; parse_experiment refuses top-level ones beside them.
    resolved.erase("loss");
    resolved.erase("metrics");
  }
  return resolved;
}

}  // namespace kiln::experiment

namespace kiln {

void OptionTraits<experiment::HyperSchedules>::read(const Json& value,
                                                    experiment::HyperSchedules& out,
                                                    const ReadContext& ctx) {
  if (!value.is_object() && !value.is_null())
    ctx.fail("expected a mapping of hyper-parameter names to schedulers, got " + value.dump());
  std::map<std::string, ComponentSpec> items;
  if (value.is_object())
    for (const auto& [name, spec] : value.items()) {
      ReadContext at = ctx.child(name);
      const auto& known = experiment::schedulable_names();
      if (std::find(known.begin(), known.end(), name) == known.end())
        at.fail("\"" + name + "\" cannot be scheduled" +
                (name == "lr" ? std::string("; the learning rate follows `scheduler:`")
                              : "; " + suggestion_text(name, known)));
      ComponentSpec& item = items.emplace(name, ComponentSpec("scheduler")).first->second;
      OptionTraits<ComponentSpec>::read(spec, item, at);
      if (item.empty()) at.fail("expected a scheduler (NAME or {type: NAME, ...}), got null");
    }
  out.items = std::move(items);
}

Json OptionTraits<experiment::HyperSchedules>::write(const experiment::HyperSchedules& value) {
  Json out = Json::object();
  for (const auto& [name, spec] : value.items) out[name] = spec.spec;
  return out;
}

void OptionTraits<experiment::StageList>::read(const Json& value, experiment::StageList& out,
                                               const ReadContext& ctx) {
  out.entries = Json::array();
  if (value.is_null()) return;
  if (!value.is_array())
    ctx.fail("expected a list of stages, e.g. [{name: head, train: {max: 2 epochs}}]");
  for (size_t i = 0; i < value.size(); ++i) {
    Json entry = value[i];
    if (!entry.is_object())
      ctx.at(i).fail(
          "expected a mapping of the keys this stage changes, e.g. {name: finetune, optimizer: "
          "{lr: 1.0e-4}}; got " +
          entry.dump());
    if (!entry.contains("name")) entry["name"] = "stage" + std::to_string(i + 1);
    const Json& name = entry.at("name");
    if (!name.is_string() || name.get<std::string>().empty())
      ctx.at(i).child("name").fail("expected a non-empty string, got " + name.dump());
    out.entries.push_back(std::move(entry));
  }
}

void OptionTraits<experiment::ModelSection>::read(const Json& value, experiment::ModelSection& out,
                                                  const ReadContext& ctx) {
  Json network = value;
  out.init_from.reset();
  if (value.is_object() && value.contains("init_from")) {
    experiment::InitFrom init;
    OptionTraits<experiment::InitFrom>::read(value.at("init_from"), init, ctx.child("init_from"));
    out.init_from = init;
    network.erase("init_from");
  }
  OptionTraits<ComponentSpec>::read(network, out.network, ctx);
}

Json OptionTraits<experiment::ModelSection>::write(const experiment::ModelSection& value) {
  Json out = value.network.spec;
  if (value.init_from)
    out["init_from"] = OptionTraits<experiment::InitFrom>::write(*value.init_from);
  return out;
}

}  // namespace kiln
