#pragma once
// Training loops (docs/training.md, "Loops"): what one batch of a training step computes, chosen
// by name in the config (`loop: {type: distillation, ...}`). The trainer around a loop is the same
// for every loop: batching and accumulation, precision, the device feed, the NaN guard, the
// optimizer step and its schedules, logging, validation, checkpoints, callbacks, stages and
// several processes. A loop decides what the step's loss is made of (`supervised`: the config's
// loss of the model's outputs; `distillation`: that blended with a frozen teacher's soft
// targets; `mean_teacher`: the labelled rows' loss and a consistency with an average of the
// weights), may log values of its own, follow each update, choose the weights validation and
// export use, and keep state in every checkpoint. Thread-safety: the training thread only.

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/registry.h"
#include "kiln/data/dataset.h"
#include "kiln/distributed/context.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/metric_values.h"
#include "kiln/models/model.h"

namespace kiln::data {
class Loader;
}

namespace kiln::engine {

class Objective;

/// A model a loop uses without training it (a distillation's teacher), in eval mode on the
/// training device, with the shape of one example it takes.
struct FrozenModel {
  std::shared_ptr<models::Model> model;
  std::vector<int64_t> input_shape;
};

/// What a loop is given before training: the model the trainer trains (and validates and
/// exports), where it trains, the shape of one training example, and how to open other models.
struct LoopSetup {
  models::Model& model;
  torch::Device device;
  std::vector<int64_t> input_shape;
  /// A new model of the trained model's architecture on the device, weights of its own (a mean
  /// teacher's).
  std::function<std::shared_ptr<models::Model>()> build_model;
  /// Opens a run folder's checkpoint `which` (best, last or a checkpoint's folder), or a
  /// checkpoint folder, as a frozen model; a ConfigError at `config_path` when it cannot.
  std::function<FrozenModel(const std::string& location, const std::string& which,
                            const std::string& config_path)>
      open_frozen;
};

/// A loop's value summed over batches on the device, read by the host only when it is logged (a
/// read per batch would wait for the device every step).
class DeviceSum {
 public:
  void add(const torch::Tensor& value) { sum_ = sum_.defined() ? sum_ + value : value; }
  /// The sum so far (0 without any), then forgotten.
  double take() {
    double value = sum_.defined() ? sum_.item<double>() : 0.0;
    sum_ = torch::Tensor();
    return value;
  }

 private:
  torch::Tensor sum_;
};

class Loop {
 public:
  virtual ~Loop() = default;

  /// Before any training (also by --dry-run): takes what the loop needs beside the model, and
  /// throws a ConfigError relative to the loop (`teacher`) when that does not fit the model.
  virtual void attach(const LoopSetup& /*setup*/) {}
  /// The loss of one training batch (already on the device, under the step's autocast), to call
  /// backward on. `objective` counts the model's loss and metrics on the batch, as logged.
  virtual torch::Tensor batch_loss(models::Model& model, Objective& objective,
                                   const data::Batch& batch) = 0;
  /// The last batch's loss as the progress bar and the NaN guard count it, detached: the
  /// objective's (the data's loss) unless the loop's own loss says more.
  virtual torch::Tensor counted_loss(const Objective& objective) const;
  /// The loop's own values since the last call (train/... tags), combined over the processes of
  /// `context`; then forgotten. Called when the trainer logs a training line.
  virtual MetricValues take_values(distributed::Context& /*context*/) { return {}; }
  /// Every tag take_values() gives, for monitors to name.
  virtual std::vector<std::string> tags() const { return {}; }
  /// After each update of the model's weights (a mean teacher's average follows them).
  virtual void after_update(models::Model& /*model*/) {}

  /// Weights that validation, eval and export use in place of the model's own (a mean
  /// teacher's average), by the model's parameter and buffer names; null: the model's own.
  virtual const NamedTensors* evaluation_weights() const { return nullptr; }
  /// The loop's own values of the validation data (val/...), measured with the weights
  /// validation uses, beside the objective's: a custom step's validation_step. Combined over
  /// `context`; none by default.
  virtual MetricValues validation_values(models::Model& /*model*/, data::Loader& /*val*/,
                                         torch::Device /*device*/, int64_t /*max_batches*/,
                                         distributed::Context& /*context*/) {
    return {};
  }
  /// Whether validation evaluates the model's own weights too, tagged val/student/...
  virtual bool validates_student() const { return false; }
  /// Whether the loop learns from examples without a label (target -1, data.labels_per_class).
  virtual bool takes_unlabelled() const { return false; }

  /// What every checkpoint keeps of the loop: numbers (train_state.json's "loop") and tensors
  /// (<tensor_file()>.safetensors). load_state throws a DataError naming `file` for a state it
  /// cannot take.
  virtual Json state() const { return Json::object(); }
  virtual void load_state(const Json& /*state*/, const std::string& /*file*/) {}
  virtual NamedTensors tensors() const { return {}; }
  virtual void load_tensors(const NamedTensors& /*tensors*/) {}
  /// The name of the tensors' file: a mean teacher's is "ema", so that eval and export take its
  /// average as they take the ema callback's.
  virtual std::string tensor_file() const { return type; }

  /// The registered name and the config path it was given at (`loop`), for messages.
  std::string type, config_path;
};

/// A ConfigError at `config_path` unless `model` gives one vector of class logits (one output of
/// two classes or more): what a loop that compares softmaxes (distillation, mean_teacher) trains.
void require_class_logits(const models::Model& model, const std::string& config_path,
                          const std::string& loop);

using LoopRegistry = Registry<Loop>;
LoopRegistry& loop_registry();

/// The loop of a trainer given none: `supervised`.
std::unique_ptr<Loop> supervised_loop();

}  // namespace kiln::engine
