#include "kiln/models/observe.h"

namespace kiln::models {
namespace {

thread_local ModuleCalls* active = nullptr;

}  // namespace

CallRecorder::CallRecorder() { active = &calls_; }
CallRecorder::~CallRecorder() { active = nullptr; }

void observe(const torch::nn::Module& module, const torch::Tensor& input,
             const torch::Tensor& output) {
  if (active) (*active)[&module].push_back({input.sizes().vec(), output.sizes().vec()});
}

}  // namespace kiln::models
