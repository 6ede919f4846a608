#pragma once
// Per-layer times of training steps, for `kiln bench` and `train.profile`: each observed module
// call's forward (between observe_begin and observe), and its backward, taken from autograd
// hooks. A call's backward begins when the gradient of its output is ready and ends when those
// of its input and of its parameters are; an input that other layers also read (a residual's
// skip) is ready only when they are done with it too, so such a layer's backward includes theirs.
// On a GPU each time waits for the device first, so the times are the kernels', not their
// launches' (at the cost of that synchronisation).
// Thread-safety: calls are timed on the thread that made the timer; backward hooks may run on
// autograd's threads and are serialised.

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "kiln/models/observe.h"

namespace kiln::models {

struct LayerTimes {
  const torch::nn::Module* module = nullptr;
  double forward_begin = 0, forward_end = 0;
  // Both 0 when no gradient flowed through the call (frozen, or outside training).
  double backward_begin = 0, backward_end = 0;
  int64_t output_bytes = 0;  // the activation the call kept for backward: its output's storage
};

class LayerTimer : private CallListener {
 public:
  using Clock = std::function<double()>;
  /// Times calls on this thread, and the backward of `model`'s parameters, until destroyed.
  LayerTimer(torch::nn::Module& model, Clock clock);
  ~LayerTimer() override;
  LayerTimer(const LayerTimer&) = delete;
  LayerTimer& operator=(const LayerTimer&) = delete;

  /// The calls since the last take, in the order they began; call after their backward.
  std::vector<LayerTimes> take();

 private:
  struct State;
  void call_begins(const torch::nn::Module& module) override;
  void call_ends(const torch::nn::Module& module, const torch::Tensor& input,
                 const torch::Tensor& output) override;

  std::shared_ptr<State> state_;  // shared with the hooks, which may outlive the timer
  CallListener* outer_ = nullptr;
  std::vector<std::pair<torch::Tensor, unsigned>> parameter_hooks_;
};

}  // namespace kiln::models
