#include "kiln/engine/experiment_config.h"

#include <algorithm>
#include <set>

#include "kiln/core/suggest.h"

namespace kiln::engine {

void TransformLists::describe(Schema& s) {
  s.field("train", train, "Applied to training batches (augmentation, then preprocessing).");
  s.field("eval", eval, "Applied for validation, testing, export and serving.");
}

void DataOptions::describe(Schema& s) {
  s.field("train", train, "The training dataset.").require();
  s.field("val", val, "Dataset for validation during training (optional).");
  s.field("test", test, "Dataset for `kiln eval --split test` (optional).");
  s.field("columns", columns,
          "Feature columns by name: how the names a dataset's `input: [...]` lists become "
          "numbers, fitted on the training split (docs/tabular.md).");
  s.field("derived", derived,
          "Features computed from each tf.Example's others before columns and targets read "
          "them, e.g. {big_tipper: \"tips > 0.2 * fare\", log_fare: \"log1p(fare)\"}; each "
          "may read the ones above it (docs/tabular.md).");
  s.field("val_fraction", val_fraction,
          "Carve this fraction of data.train out, by a seeded draw, as the validation split "
          "(for datasets that have none; data.val must then be unset).")
      .check([](double f) { return f >= 0 && f < 1; }, "in [0, 1)");
  s.field("batch_size", batch_size, "Examples per training step.").min(1);
  s.field("eval_batch_size", eval_batch_size, "Examples per evaluation batch; 0 = batch_size.")
      .min(0);
  s.field("shuffle", shuffle, "Visit training examples in a new seeded order every epoch.");
  s.field("drop_last", drop_last, "Skip the last, smaller training batch of each epoch.");
  s.field("batch_per_rank", batch_per_rank,
          "In a distributed job, batch_size is each rank's batch; by default it is the job's, "
          "split among the ranks.");
  s.field("workers", workers,
          "Threads that make batches (gather, decode, transforms) ahead of the trainer; 0 makes "
          "them on the training thread.")
      .min(0);
  s.field("prefetch", prefetch, "Batches made ahead of the trainer (at least `workers`).").min(1);
  s.field("cache", cache,
          "device: hold every split's examples, decoded, in the training device's memory (the "
          "GPU's on CUDA, host memory on the CPU) and gather and transform each batch there; "
          "none: read them through the dataset every epoch.");
  s.field("skip", skip, "Leave out the first N training examples.").min(0);
  s.field("take", take, "Train on at most N examples (after skip); 0 = all.").min(0);
  s.field("transforms", transforms, "Batch transforms for training and for evaluation.");
}

namespace {

bool non_negative_scales(const std::map<std::string, double>& scales) {
  for (const auto& entry : scales)
    if (entry.second < 0) return false;
  return true;
}

}  // namespace

void TrainOptions::describe(Schema& s) {
  s.field("max", max, "When training ends: steps, epochs, samples or time.");
  s.field("validate_every", validate_every, "How often to evaluate on data.val.");
  s.field("log_every", log_every, "How often to log training loss and throughput.");
  s.field("monitor", monitor, "The metric that decides the best result, e.g. val/accuracy.");
  s.field("mode", mode, "Whether the monitored metric is better lower or higher.");
  s.field("freeze", freeze,
          "Dotted module or parameter paths that do not train (e.g. [layer1, conv1]); frozen "
          "modules also keep their batchnorm statistics.");
  s.field("lr_scales", lr_scales,
          "Learning-rate factors by parameter-name pattern, * matching anything (e.g. "
          "{\"fc.*\": 10, \"*\": 1}); the longest matching pattern wins, 1 when none does.")
      .check(non_negative_scales, "with scales >= 0");
  s.field("weight_decay_scales", weight_decay_scales,
          "Weight-decay factors by parameter-name pattern, as lr_scales (e.g. {\"*.bias\": 0} "
          "for no decay on biases); the longest matching pattern wins, 1 when none does.")
      .check(non_negative_scales, "with scales >= 0");
  s.field("deterministic", deterministic,
          "Deterministic kernels only (an error names any op that has none), so that a run on "
          "the same machine and thread count repeats bitwise.");
  s.field("val_steps", val_steps, "Validate on at most this many batches; 0 = all of data.val.")
      .min(0);
  s.field("accumulate", accumulate,
          "Batches whose gradients add up before each optimizer step (a step is one update).")
      .min(1);
  s.field("clip_norm", clip_norm,
          "Scale gradients so their global L2 norm is at most this; 0 = off. The norm before "
          "clipping is logged as train/grad_norm.")
      .min(0);
  s.field("clip_value", clip_value, "Clip each gradient element to [-v, v]; 0 = off.").min(0);
  s.field("on_nan", on_nan,
          "When the loss or gradient norm is NaN/Inf: stop (fail the run), skip_step (no "
          "update; fails after 10 in a row), rewind (reload the last checkpoint and halve the "
          "learning rate; fails after 5 rewinds).");
  s.field("stop_at", stop_at,
          "End training once train.monitor reaches this value (in train.mode's direction).");
  s.field("precision", precision,
          "fp32; bf16 (autocast, CPU or CUDA); fp16 (autocast with loss scaling, CUDA only); "
          "auto: bf16 where the hardware computes it natively (a CPU with AVX512-BF16 or AMX, "
          "a GPU of compute capability 8 or more), fp16 on older GPUs, else fp32.");
  s.field("profile", profile,
          "Steps to profile ({from: 100, to: 110}): RUN/trace.json, a Chrome trace of their data "
          "wait, forward, backward, update and callbacks, and each layer's forward and backward.");
}

void ProfileWindow::describe(Schema& s) {
  s.field("from", from, "The first step profiled (steps count from 1).").min(1);
  s.field("to", to, "The last step profiled; at least `from`.").min(1);
}

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

void DistributedOptions::describe(Schema& s) {
  s.field("timeout", timeout,
          "Seconds a rank waits for the others, at the start and in each exchange, before the "
          "job fails naming the rank.")
      .check([](double t) { return t > 0; }, "above 0");
  s.field("bucket_mb", bucket_mb, "Megabytes of gradients all-reduced in one exchange.")
      .check([](double mb) { return mb > 0; }, "above 0");
  s.field("overlap", overlap,
          "Start each bucket's exchange as soon as backward has its gradients (true), or all of "
          "them after backward (false).");
  s.field("sync_batch_norm", sync_batch_norm,
          "Normalize each batch norm's training batches by the statistics of the whole job's "
          "batch instead of each rank's share (PyTorch's SyncBatchNorm).");
}

void RuntimeOptions::describe(Schema& s) {
  s.field("device", device, "auto (CUDA when available), cpu or cuda.");
  s.field("threads", threads,
          "Intra-op CPU threads; auto = all cores, shared among the ranks on this machine.");
  s.field("pin_memory", pin_memory,
          "On CUDA, copy each batch to the GPU from page-locked memory on a side stream, "
          "overlapping the steps before it (true), or with ordinary blocking copies (false).");
  s.field("channels_last", channels_last,
          "Store images and convolution kernels channels-last (NHWC), the layout the fastest "
          "GPU convolutions read; auto times a training step of the model both ways at the "
          "start and keeps channels-last where it is at least 5% faster (contiguous under "
          "train.deterministic).");
  s.field("cudnn_benchmark", cudnn_benchmark,
          "On CUDA, time cuDNN's convolution algorithms on each new input shape and keep the "
          "fastest (PyTorch's torch.backends.cudnn.benchmark); always off under "
          "train.deterministic.");
  s.field("distributed", distributed, "Distributed training: timeouts and gradient buckets.");
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

}  // namespace kiln::engine

namespace kiln {

void OptionTraits<engine::HyperSchedules>::read(const Json& value, engine::HyperSchedules& out,
                                                const ReadContext& ctx) {
  if (!value.is_object() && !value.is_null())
    ctx.fail("expected a mapping of hyper-parameter names to schedulers, got " + value.dump());
  std::map<std::string, ComponentSpec> items;
  if (value.is_object())
    for (const auto& [name, spec] : value.items()) {
      ReadContext at = ctx.child(name);
      const auto& known = engine::schedulable_names();
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

Json OptionTraits<engine::HyperSchedules>::write(const engine::HyperSchedules& value) {
  Json out = Json::object();
  for (const auto& [name, spec] : value.items) out[name] = spec.spec;
  return out;
}

void OptionTraits<engine::StageList>::read(const Json& value, engine::StageList& out,
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

void OptionTraits<engine::AutoCount>::read(const Json& value, engine::AutoCount& out,
                                           const ReadContext& ctx) {
  if (value == "auto") {
    out.value = 0;
  } else if (value.is_number_integer() && value.get<int64_t>() >= 1) {
    out.value = value.get<int64_t>();
  } else {
    ctx.fail("expected \"auto\" or an integer >= 1, got " + value.dump());
  }
}

Json OptionTraits<engine::AutoCount>::write(const engine::AutoCount& value) {
  return value.value == 0 ? Json("auto") : Json(value.value);
}

void OptionTraits<engine::AutoSwitch>::read(const Json& value, engine::AutoSwitch& out,
                                            const ReadContext& ctx) {
  if (value == "auto")
    out = engine::AutoSwitch::kAuto;
  else if (value.is_boolean())
    out = value.get<bool>() ? engine::AutoSwitch::kOn : engine::AutoSwitch::kOff;
  else
    ctx.fail("expected auto, true or false, got " + value.dump());
}

Json OptionTraits<engine::AutoSwitch>::write(engine::AutoSwitch value) {
  if (value == engine::AutoSwitch::kAuto) return "auto";
  return value == engine::AutoSwitch::kOn;
}

void OptionTraits<engine::ModelSection>::read(const Json& value, engine::ModelSection& out,
                                              const ReadContext& ctx) {
  Json network = value;
  out.init_from.reset();
  if (value.is_object() && value.contains("init_from")) {
    engine::InitFrom init;
    OptionTraits<engine::InitFrom>::read(value.at("init_from"), init, ctx.child("init_from"));
    out.init_from = init;
    network.erase("init_from");
  }
  OptionTraits<ComponentSpec>::read(network, out.network, ctx);
}

Json OptionTraits<engine::ModelSection>::write(const engine::ModelSection& value) {
  Json out = value.network.spec;
  if (value.init_from) out["init_from"] = OptionTraits<engine::InitFrom>::write(*value.init_from);
  return out;
}

}  // namespace kiln
