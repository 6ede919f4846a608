#include "kiln/models/observe.h"

namespace kiln::models {
namespace {

thread_local ModuleCalls* active = nullptr;
thread_local const CallWatcher::Watch* watching = nullptr;

}  // namespace

CallRecorder::CallRecorder() { active = &calls_; }
CallRecorder::~CallRecorder() { active = nullptr; }

CallWatcher::CallWatcher(Watch watch) : watch_(std::move(watch)) { watching = &watch_; }
CallWatcher::~CallWatcher() { watching = nullptr; }

void observe(const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output) {
  if (active) (*active)[&module].push_back({input.sizes().vec(), output.sizes().vec()});
  if (watching) (*watching)(module, input, output);
}

}  // namespace kiln::models
