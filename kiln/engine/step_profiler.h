#pragma once
// What `train.profile` and `kiln bench` record of training steps: for each step of a window, when
// it waited for data, ran forward, backward, the optimizer's update, the callbacks (and any
// validation or checkpoint after it), and each layer's forward and backward (models::LayerTimer).
// The trainer reports; the profiler keeps only what falls in its window, so outside it the
// trainer pays one pointer test per phase. A window of steps that training never reaches in full
// still closes, with what it has, when training ends.
// Thread-safety: the training thread.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/chrome_trace.h"
#include "kiln/core/console.h"
#include "kiln/models/layer_timing.h"

namespace kiln::engine {

struct PhaseTime {
  std::string phase;  // data, forward, backward, optimizer, callbacks, validation, checkpoint
  double begin = 0, end = 0;
};

struct ProfiledStep {
  int64_t step = 0;
  std::vector<PhaseTime> phases;
  std::vector<models::LayerTimes> layers;  // every call of every batch of the step
};

class StepProfiler {
 public:
  using Closed = std::function<void(const StepProfiler&)>;
  /// Profiles steps `from` to `to` (1-based, inclusive); `closed` runs once, as the window
  /// closes.
  StepProfiler(int64_t from, int64_t to, Clock clock, Closed closed);
  ~StepProfiler();

  /// As step `step` begins (before its data is asked for): starts timing `model`'s layers when
  /// the step is in the window.
  void step_begins(int64_t step, torch::nn::Module& model);
  /// A phase of the current step, on the clock given; ignored outside the window.
  void phase(const char* name, double begin, double end);
  /// After each batch's backward: takes its layer times (before the next batch's forward).
  void batch_done();
  /// As the step ends (its callbacks, validation and checkpoint done).
  void step_ends();
  /// As training ends: closes the window if it is still open.
  void finish();

  const std::vector<ProfiledStep>& steps() const { return steps_; }
  /// The layers' dotted paths in the model last profiled ("" for the model itself).
  const std::map<const torch::nn::Module*, std::string>& layer_paths() const { return paths_; }
  /// The steps as a Chrome trace: phases and layer forwards on one row (nested), layer
  /// backwards on a second (autograd's order need not nest them).
  ChromeTrace chrome_trace() const;

 private:
  void close();

  int64_t from_, to_;
  Clock clock_;
  Closed closed_;
  bool is_closed_ = false;
  std::unique_ptr<models::LayerTimer> timer_;  // while a step of the window runs
  std::vector<ProfiledStep> steps_;
  std::map<const torch::nn::Module*, std::string> paths_;
};

}  // namespace kiln::engine
