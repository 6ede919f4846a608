#include "kiln/models/layer_timing.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace kiln::models {

struct LayerTimer::State {
  struct Call {
    LayerTimes times;
    double input_ready = 0;  // when the gradient of the call's input was ready; 0: never
  };
  Clock clock;
  bool synchronise = false;  // a CUDA model: wait for the device before each reading
  std::mutex mutex;
  std::vector<Call> calls;
  std::vector<size_t> open;  // calls begun and not ended, innermost last
  // Counts takes: a hook of a call already taken (a graph whose backward came late) finds
  // another generation and is ignored, instead of timing a call of the next step.
  uint64_t generation = 0;
  // When each module's own or nested parameters last got their gradient.
  std::map<const torch::nn::Module*, double> parameters_ready;
  // Calls timed by one output hook each: a container returns its last child's output, which
  // ended just before it, and shares that child's hook, so that the container's backward does
  // not begin after its child's. (Matched by the tensor, held: an address could be a dead
  // tensor's, reused.)
  std::vector<std::vector<size_t>> output_groups;
  torch::Tensor last_output;

  double now() {
    if (synchronise) torch::cuda::synchronize();
    return clock();
  }

  // The call a hook made in generation `made_in` stands for, or null once it was taken.
  Call* call_of(uint64_t made_in, size_t index) {
    return made_in == generation && index < calls.size() ? &calls[index] : nullptr;
  }
};

namespace {

// The modules holding `parameter`, the outermost first: its gradient ends their backward.
std::vector<const torch::nn::Module*> holders_of(torch::nn::Module& model,
                                                 const torch::Tensor& parameter) {
  std::vector<const torch::nn::Module*> holders;
  for (const auto& module : model.modules(/*include_self=*/true))
    for (const auto& p : module->parameters())
      if (p.is_same(parameter)) {
        holders.push_back(module.get());
        break;
      }
  return holders;
}

}  // namespace

LayerTimer::LayerTimer(torch::nn::Module& model, Clock clock) : state_(std::make_shared<State>()) {
  state_->clock = std::move(clock);
  for (const auto& parameter : model.parameters()) {
    if (parameter.is_cuda()) state_->synchronise = true;
    if (!parameter.requires_grad()) continue;
    std::weak_ptr<State> weak = state_;
    std::vector<const torch::nn::Module*> holders = holders_of(model, parameter);
    unsigned hook = parameter.register_hook([weak, holders](const torch::Tensor&) {
      auto state = weak.lock();
      if (!state) return;
      double now = state->now();
      std::lock_guard<std::mutex> lock(state->mutex);
      for (const auto* holder : holders) {
        double& ready = state->parameters_ready[holder];
        ready = std::max(ready, now);
      }
    });
    parameter_hooks_.emplace_back(parameter, hook);
  }
  outer_ = listen_to_calls(this);
}

LayerTimer::~LayerTimer() {
  listen_to_calls(outer_);
  for (auto& [parameter, hook] : parameter_hooks_) parameter.remove_hook(hook);
}

void LayerTimer::call_begins(const torch::nn::Module& module) {
  double now = state_->now();
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->open.push_back(state_->calls.size());
  State::Call call;
  call.times.module = &module;
  call.times.forward_begin = now;
  state_->calls.push_back(call);
}

void LayerTimer::call_ends(const torch::nn::Module& module, const torch::Tensor& input,
                           const torch::Tensor& output) {
  double now = state_->now();
  std::lock_guard<std::mutex> lock(state_->mutex);
  // A call observed without a beginning (a network that reports only ends) is not timed.
  if (state_->open.empty() || state_->calls[state_->open.back()].times.module != &module) return;
  size_t index = state_->open.back();
  state_->open.pop_back();
  LayerTimes& times = state_->calls[index].times;
  times.forward_end = now;
  if (output.defined()) times.output_bytes = int64_t(output.numel() * output.element_size());
  std::weak_ptr<State> weak = state_;
  uint64_t generation = state_->generation;
  if (output.defined() && output.requires_grad()) {
    if (state_->last_output.defined() && output.is_same(state_->last_output)) {
      state_->output_groups.back().push_back(index);
    } else {
      state_->output_groups.push_back({index});
      size_t group = state_->output_groups.size() - 1;
      output.register_hook([weak, generation, group](const torch::Tensor&) {
        auto state = weak.lock();
        if (!state) return;
        double now = state->now();
        std::lock_guard<std::mutex> lock(state->mutex);
        if (generation != state->generation) return;
        for (size_t shared : state->output_groups[group])
          if (auto* call = state->call_of(generation, shared)) call->times.backward_begin = now;
      });
    }
    state_->last_output = output;
  }
  if (input.defined() && input.requires_grad())
    input.register_hook([weak, generation, index](const torch::Tensor&) {
      if (auto state = weak.lock()) {
        double now = state->now();
        std::lock_guard<std::mutex> lock(state->mutex);
        if (auto* call = state->call_of(generation, index)) call->input_ready = now;
      }
    });
}

std::vector<LayerTimes> LayerTimer::take() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<LayerTimes> taken;
  for (auto& call : state_->calls) {
    LayerTimes& times = call.times;
    if (times.backward_begin > 0) {
      auto ready = state_->parameters_ready.find(times.module);
      double parameters = ready == state_->parameters_ready.end() ? 0 : ready->second;
      times.backward_end = std::max({times.backward_begin, call.input_ready, parameters});
    }
    taken.push_back(times);
  }
  state_->calls.clear();
  state_->open.clear();
  state_->generation += 1;
  state_->parameters_ready.clear();
  state_->output_groups.clear();
  state_->last_output = torch::Tensor();
  return taken;
}

}  // namespace kiln::models
