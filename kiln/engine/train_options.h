#pragma once
// The `train:` section of a config: how long the trainer trains, how often it validates and logs,
// what it freezes, scales and clips, what it does with a non-finite step, and its precision. The
// trainer and its callbacks read these; experiment/experiment_config.h places the section in the
// whole config. Thread-safety: values.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/schema.h"

namespace kiln::engine {

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

}  // namespace kiln::engine
