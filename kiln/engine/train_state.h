#pragma once
// TrainState (docs/design.md §7): everything besides weights and optimizer state that a resumed run
// needs to continue exactly where a checkpoint was taken: progress in every unit, the training
// loader's position, LibTorch's random generators, the best monitored value, the latest logged
// values, each callback's state and the learning-rate schedule's. Saved as train_state.json in
// every checkpoint. Thread-safety: values; capture_rng/restore_rng touch LibTorch's global
// generators.

#include <optional>
#include <string>

#include "kiln/core/json.h"
#include "kiln/core/period.h"
#include "kiln/data/loader_position.h"
#include "kiln/engine/metric_values.h"

namespace kiln::engine {

struct BestValue {
  std::string metric;
  double value = 0;
  int64_t step = 0;
};

/// Which train cycle (stage) a trainer runs and where that stage began: `train.max` and the
/// schedule count from `start`, while the steps, epochs and samples logged go on counting over
/// the whole run. A run without stages is stage 0, begun at zero.
struct StageMark {
  int64_t index = 0;
  Progress start;
};

struct TrainState {
  Progress progress;
  StageMark stage;
  data::LoaderPosition data;
  bool validated = false;  // a validation ran after the last step
  std::optional<BestValue> best;
  MetricValues last;                // the latest value of every tag
  Json callbacks = Json::object();  // by callback name: its state()
  Json loop = Json::object();       // the training loop's state() (loop.h)
  Json rng = Json::object();        // capture_rng()
  double lr_multiplier = 1.0;       // halved by each NaN rewind
  int64_t rewinds = 0;
  Json precision;                   // the fp16 loss scaler's state; null otherwise
  Json scheduler = Json::object();  // the learning-rate schedule's state() (reduce_on_plateau)
};

/// A checkpoint's file of its TrainState; train_state_json.cpp is its one reader, the checkpoint
/// writer (checkpoint.cpp) its one writer.
inline constexpr const char* kTrainStateFile = "train_state.json";
/// The train state file of the checkpoint folder `checkpoint_dir`.
inline std::string train_state_file(const std::string& checkpoint_dir) {
  return checkpoint_dir + "/" + kTrainStateFile;
}

Json to_json(const TrainState& state);
/// Reads what to_json wrote; DataError naming `file` and the missing or malformed key.
TrainState train_state_from_json(const Json& json, const std::string& file);
/// The train_state.json of a checkpoint folder: IoError naming the file when it cannot be read,
/// DataError naming it (and the byte offset or key) when it is not JSON or not a train state.
TrainState read_train_state(const std::string& checkpoint_dir);
/// The step a checkpoint directory's name gives; -1 when it is not a step-N name.
int64_t checkpoint_step(const std::string& dir);
/// The train state in `text`, the content of `file`; DataError as read_train_state.
TrainState parse_train_state(const std::string& text, const std::string& file);

/// The states of LibTorch's default generators (CPU, and each CUDA device), as hex strings.
Json capture_rng();
/// Restores what capture_rng() saved; DataError naming `file` when it does not fit.
void restore_rng(const Json& rng, const std::string& file);

}  // namespace kiln::engine
