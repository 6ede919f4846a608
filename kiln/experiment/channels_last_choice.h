#pragma once
// runtime.channels_last decided for a run on the machine it trains on. Whether storing images
// and convolution kernels channels-last (NHWC) pays depends on the device, its kernels and the
// model: on an H100 it made a ResNet-20's steps 16% faster and a small CNN's 13% slower, on a
// 2-core EPYC a CNN's no faster (docs/benchmarks.md). So `auto` times training steps (forward,
// loss, backward) of the model itself on one of its training batches in both layouts and keeps
// channels-last only where it is clearly faster. A resumed run keeps what it chose at its
// start, and rank 0 chooses for every rank of a job (the layouts of the ranks' gradients must
// agree). The choice says why, for the console and run.json.
// Thread-safety: the training thread (the timing runs LibTorch there).

#include <optional>
#include <string>

#include "kiln/core/json.h"
#include "kiln/engine/objective.h"
#include "kiln/engine/runtime_options.h"
#include "kiln/engine/train_options.h"
#include "kiln/models/model.h"

namespace kiln::distributed {
class Context;
}

namespace kiln::experiment {

struct RunSession;

/// The median time of a training step in each layout, in milliseconds.
struct LayoutTimes {
  double contiguous_ms = 0;
  double channels_last_ms = 0;
};

struct ChannelsLastChoice {
  engine::AutoSwitch asked = engine::AutoSwitch::kAuto;
  bool used = false;
  std::string why;
  std::optional<LayoutTimes> times;  // where it was measured

  /// What run.json keeps under "channels_last": {"asked", "used", "why"} and "step_ms"
  /// {"contiguous", "channels_last"} where measured.
  Json record() const;
};

/// channels-last keeps a step at most this share of the contiguous step's time: a smaller gain
/// is within the noise of a few steps, and contiguous is the layout every kernel reads.
constexpr double kChannelsLastMostShare = 0.95;

/// The choice that needs no timing: asked true or false; auto for a model without 4-D kernels
/// (nothing to store otherwise) or under train.deterministic (a rerun must repeat bitwise, and
/// two timings may choose differently). None where auto must measure.
std::optional<ChannelsLastChoice> channels_last_unmeasured(engine::AutoSwitch asked,
                                                           bool has_4d_kernels, bool deterministic);

/// The choice from measured step times.
ChannelsLastChoice channels_last_from_times(const LayoutTimes& times);

/// The choice a run being resumed made at its start, from its run.json's "channels_last"; none
/// where the record has none (a run from before auto, or a hand-edited one: then it measures
/// again).
std::optional<ChannelsLastChoice> channels_last_recorded(const Json& run_record);

/// Times training steps of `model` on `batch` (on `device`, under `precision`'s autocast) in
/// both layouts, alternating, at least 2 and at most 5 of each after one unmeasured each (about
/// 3 s at most beyond those). No weight changes; what a step does change (gradients, batch norm
/// statistics, the mode, the random generators) is put back, and the model is left contiguous.
LayoutTimes time_layouts(models::Model& model, engine::Objective& objective,
                         const data::Batch& batch, torch::Device device,
                         engine::PrecisionMode precision);

/// Decides runtime.channels_last for the session's run, from `recorded` (run.json of a run being
/// resumed, null for a new one) or by timing its first training batch, on rank 0 of `context`,
/// which gives the decision to the others. Stores the session's model and makes its later
/// loaders so, and says an auto decision on `out` (unless null).
ChannelsLastChoice decide_channels_last(RunSession& session, const Json& recorded,
                                        distributed::Context& context, std::FILE* out);

}  // namespace kiln::experiment
