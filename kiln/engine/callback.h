#pragma once
// Callbacks (docs/design.md §7): everything optional in training (checkpoint schedules, early
// stopping, EMA, learning-rate logging) hangs off the trainer's loop through these hooks, so the
// loop itself stays the same whatever the config asks for. A callback's state (numbers as JSON,
// tensors by name) goes into every checkpoint, so a resumed run continues with the callback exactly
// where it was. Thread-safety: called from the training thread only.

#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/registry.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/evaluator.h"
#include "kiln/models/model.h"

namespace kiln::engine {

struct TrainOptions;

/// What a callback may see of, and ask from, the running trainer.
class TrainerView {
 public:
  virtual ~TrainerView() = default;
  virtual models::Model& model() = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  virtual const TrainOptions& options() const = 0;
  virtual const Progress& progress() const = 0;
  /// The latest value of every tag logged so far.
  virtual const MetricValues& last_values() const = 0;
  /// The tags a monitor may name (val/... and train/...).
  virtual std::vector<std::string> monitorable() const = 0;
  /// Logs values at the current step (metrics.csv, the run's summary).
  virtual void record(const MetricValues& values) = 0;
  /// A line on the console and in train.log.
  virtual void say(const std::string& line) = 0;
  /// Asks for a checkpoint of the whole training state at the end of this step, once every
  /// callback has run and any validation of the step is done (ignored when this trainer has
  /// nowhere to write checkpoints).
  virtual void request_checkpoint() = 0;
  /// Where checkpoints go ("" when nowhere).
  virtual std::string checkpoints_dir() const = 0;
  /// Tells the trainer the model's weights were replaced (e.g. by the best ones), so the
  /// checkpoint written at the end cannot be one saved earlier at the same step.
  virtual void weights_replaced() = 0;
  /// A copy of the weights validation evaluates: a callback's (EMA) or the model's own.
  virtual NamedTensors evaluated_weights() const = 0;
};

class Callback {
 public:
  virtual ~Callback() = default;

  /// Before any training (of any stage, and by --dry-run): a ConfigError at config_path when
  /// this callback cannot work in a training with `train` options measuring `monitorable` tags.
  virtual void check(const TrainOptions& /*train*/,
                     const std::vector<std::string>& /*monitorable*/) const {}
  virtual void on_fit_begin(TrainerView&) {}
  /// After every optimizer step, before its logging and validation; `before` is the progress
  /// before it (for Period::crossed).
  virtual void on_step_end(TrainerView&, const Progress& /*before*/) {}
  /// Before each validation.
  virtual void on_validation_begin(TrainerView&) {}
  /// After each validation, with its values (also in view.last_values()).
  virtual void on_validation_end(TrainerView&, const MetricValues&) {}
  virtual void on_epoch_end(TrainerView&) {}
  /// When the loop has ended (not when stopped by a signal), before the final checkpoint.
  virtual void on_fit_end(TrainerView&) {}
  /// After the trainer wrote a checkpoint (periodic, final or on a signal).
  virtual void on_checkpoint_saved(TrainerView&, const std::string& /*dir*/) {}
  /// After another callback replaced the model's weights (early_stopping's restore_best).
  virtual void on_weights_replaced(TrainerView&) {}
  /// Why training should end now, or nothing to go on.
  virtual std::optional<std::string> should_stop() const { return std::nullopt; }

  /// Weights to evaluate with in place of the model's own (EMA), by the model's parameter and
  /// buffer names; null when this callback has none.
  virtual const NamedTensors* evaluation_weights() const { return nullptr; }

  virtual Json state() const { return Json::object(); }
  virtual void load_state(const Json& /*state*/) {}
  /// Tensors of the state (e.g. EMA weights), saved as <type>.safetensors in each checkpoint.
  virtual NamedTensors tensors() const { return {}; }
  virtual void load_tensors(const NamedTensors& /*tensors*/) {}

  /// The registered name and the config path it was given at (`callbacks[1]`), for messages and
  /// for naming its saved state.
  std::string type, config_path;
};

using CallbackRegistry = Registry<Callback>;
CallbackRegistry& callback_registry();

/// Puts `weights` (by the model's parameter and buffer names) into `model` for its lifetime and the
/// model's own back afterwards; does nothing when `weights` is null.
class SwappedWeights {
 public:
  SwappedWeights(models::Model& model, const NamedTensors* weights);
  ~SwappedWeights();
  SwappedWeights(const SwappedWeights&) = delete;
  SwappedWeights& operator=(const SwappedWeights&) = delete;

 private:
  models::Model& model_;
  NamedTensors saved_;
};

/// A monitored tag that is not among the `monitorable` ones is a ConfigError at `path` listing
/// them.
void check_monitor(const std::string& monitor, const std::vector<std::string>& monitorable,
                   const std::string& path);

/// Whether `value` improves on `best` by more than `min_delta` in `mode` (min|max). Any value but
/// NaN improves on no best yet; NaN improves on nothing, so a diverged run never becomes the best.
bool improves(double value, const std::optional<double>& best, Mode mode, double min_delta = 0);

}  // namespace kiln::engine
