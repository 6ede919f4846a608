#include "kiln/engine/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cmath>

#include "kiln/core/error.h"

namespace kiln::engine {

Precision::Precision(PrecisionMode mode, torch::Device device) : mode_(mode), device_(device) {
  if (mode_ == PrecisionMode::kAuto)  // experiment/precision_choice.h decides it before
    throw Error("train.precision: auto reached the trainer undecided");
  if (mode_ == PrecisionMode::kFp16 && !device_.is_cuda())
    throw ConfigError(
        "train.precision", "",
        "fp16 needs a CUDA device (this run uses " + device_.str() + "); use bf16, or fp32");
}

// LibTorch 2.4 replaced autocast's per-device functions (set_enabled, set_cpu_enabled, ...) with
// ones that take the device type; Debian's 1.13 has only the old ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
static at::DeviceType autocast_device(bool cuda) { return cuda ? at::kCUDA : at::kCPU; }
static bool autocast_enabled(bool cuda) {
  return at::autocast::is_autocast_enabled(autocast_device(cuda));
}
static void set_autocast_enabled(bool cuda, bool enabled) {
  at::autocast::set_autocast_enabled(autocast_device(cuda), enabled);
}
static void set_autocast_dtype(bool cuda, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(autocast_device(cuda), dtype);
}
#else
static bool autocast_enabled(bool cuda) {
  return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
static void set_autocast_enabled(bool cuda, bool enabled) {
  if (cuda)
    at::autocast::set_enabled(enabled);
  else
    at::autocast::set_cpu_enabled(enabled);
}
static void set_autocast_dtype(bool cuda, at::ScalarType dtype) {
  if (cuda)
    at::autocast::set_autocast_gpu_dtype(dtype);
  else
    at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

Precision::Autocast::Autocast(PrecisionMode mode, torch::Device device) {
  if (mode == PrecisionMode::kFp32 || mode == kScaledFp32ForTests) return;
  active_ = true;
  cuda_ = device.is_cuda();
  was_enabled_ = autocast_enabled(cuda_);
  set_autocast_dtype(cuda_, mode == PrecisionMode::kFp16 ? at::kHalf : at::kBFloat16);
  set_autocast_enabled(cuda_, true);
  at::autocast::increment_nesting();
}

Precision::Autocast::~Autocast() {
  if (!active_) return;
  // The cast weights are cached for the forward pass only, as torch.autocast's exit does.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(cuda_, was_enabled_);
}

bool LossScaler::unscale(const std::vector<torch::Tensor>& gradients) const {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> finite;
  for (const auto& gradient : gradients) {
    gradient.div_(scale_);
    finite.push_back(gradient.isfinite().all());
  }
  return finite.empty() || torch::stack(finite).all().item<bool>();  // one device sync
}

void LossScaler::update(bool finite) {
  if (!finite) {
    scale_ /= 2;
    good_steps_ = 0;
    return;
  }
  if (++good_steps_ == growth_interval) {
    scale_ *= 2;
    good_steps_ = 0;
  }
}

Json LossScaler::state() const { return {{"loss_scale", scale_}, {"good_steps", good_steps_}}; }

void LossScaler::load_state(const Json& state) {
  if (state.is_null()) return;
  scale_ = state.at("loss_scale").get<double>();
  good_steps_ = state.at("good_steps").get<int64_t>();
}

}  // namespace kiln::engine
