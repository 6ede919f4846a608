#include "kiln/models/observe.h"

namespace kiln::models {
namespace {

thread_local ModuleCalls* active = nullptr;
thread_local const CallWatcher::Watch* watching = nullptr;
thread_local CallListener* listening = nullptr;

}  // namespace

CallRecorder::CallRecorder() { active = &calls_; }
CallRecorder::~CallRecorder() { active = nullptr; }

CallWatcher::CallWatcher(Watch watch) : watch_(std::move(watch)) { watching = &watch_; }
CallWatcher::~CallWatcher() { watching = nullptr; }

CallListener* listen_to_calls(CallListener* listener) {
  CallListener* before = listening;
  listening = listener;
  return before;
}

void observe_begin(const torch::nn::Module& module) {
  if (listening) listening->call_begins(module);
}

void observe(const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output) {
  if (active) (*active)[&module].push_back({input.sizes().vec(), output.sizes().vec()});
  if (watching) (*watching)(module, input, output);
  if (listening) listening->call_ends(module, input, output);
}

}  // namespace kiln::models
