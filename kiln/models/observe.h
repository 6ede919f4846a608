#pragma once
// What `kiln model summary` learns by running a model once: the input and output shape of each
// module call (and what a CallWatcher sees: the tensors themselves; and a LayerTimer, when each
// call begins and ends). LibTorch's C++ modules have no forward hooks, so containers (LayerStack)
// and networks report their children's calls here, through `call`. Outside a summary this costs
// a thread-local check or two per call. Thread-safety: observations are per thread.

#include <torch/torch.h>

#include <functional>
#include <map>
#include <vector>

namespace kiln::models {

/// One call of a module: its input and output shapes, batch dimension included.
struct ModuleCall {
  std::vector<int64_t> input, output;
};

using ModuleCalls = std::map<const torch::nn::Module*, std::vector<ModuleCall>>;

/// Records calls on this thread while alive (one at a time).
class CallRecorder {
 public:
  CallRecorder();
  ~CallRecorder();
  CallRecorder(const CallRecorder&) = delete;
  CallRecorder& operator=(const CallRecorder&) = delete;
  const ModuleCalls& calls() const { return calls_; }

 private:
  ModuleCalls calls_;
};

/// Sees the tensors of every observed call on this thread while alive (one at a time): how
/// TensorBoard's projector takes a layer's activations.
class CallWatcher {
 public:
  using Watch = std::function<void(const torch::nn::Module& module, const torch::Tensor& input,
                                   const torch::Tensor& output)>;
  explicit CallWatcher(Watch watch);
  ~CallWatcher();
  CallWatcher(const CallWatcher&) = delete;
  CallWatcher& operator=(const CallWatcher&) = delete;

 private:
  Watch watch_;
};

/// What a LayerTimer (layer_timing.h) is told; observe.cpp holds the one active on this thread.
class CallListener {
 public:
  virtual ~CallListener() = default;
  virtual void call_begins(const torch::nn::Module& module) = 0;
  virtual void call_ends(const torch::nn::Module& module, const torch::Tensor& input,
                         const torch::Tensor& output) = 0;
};

/// Makes `listener` (null: none) the one told of calls on this thread; returns the one before.
CallListener* listen_to_calls(CallListener* listener);

/// Notes that a call of `module` begins; each is followed by observe() for the same module.
void observe_begin(const torch::nn::Module& module);

/// Notes a call of `module` when a CallRecorder, CallWatcher or CallListener is alive on this
/// thread.
void observe(const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output);

/// `module(input)`, observed: how networks call their children.
template <class Holder>
torch::Tensor call(Holder& module, const torch::Tensor& input) {
  observe_begin(*module);
  torch::Tensor output = module->forward(input);
  observe(*module, input, output);
  return output;
}

/// Modules whose multiply-accumulates are not those of a convolution or linear layer they hold
/// (recurrent layers, attention) say how many they do per call.
class CountsMultiplyAccumulates {
 public:
  virtual ~CountsMultiplyAccumulates() = default;
  /// For one example of `call` (shapes include the batch dimension).
  virtual int64_t multiply_accumulates(const ModuleCall& call) const = 0;
};

}  // namespace kiln::models
