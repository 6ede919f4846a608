#pragma once
// Mixed precision (train.precision): `bf16` runs the forward pass under LibTorch's autocast in
// bfloat16 (CPU and CUDA); `fp16` runs it in float16 on CUDA with dynamic loss scaling.
// Weights, optimizer state and gradients stay in float32; validation runs in float32.
// Thread-safety: autocast state is per thread; one Precision per training thread.

#include <torch/torch.h>

#include <string>

#include "kiln/core/json.h"
#include "kiln/engine/train_options.h"

namespace kiln::engine {

/// Dynamic loss scaling for fp16, as torch.cuda.amp.GradScaler: the loss is multiplied by the
/// scale before backward and the gradients divided by it before the step; a step whose gradients
/// overflow is skipped and the scale halved; after `growth_interval` good steps it doubles.
class LossScaler {
 public:
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  /// Divides the gradients by the scale; false when any is not finite (skip the step).
  bool unscale(const std::vector<torch::Tensor>& gradients) const;
  void update(bool finite);
  double value() const { return scale_; }
  Json state() const;
  void load_state(const Json& state);

  static constexpr int64_t growth_interval = 2000;

 private:
  double scale_ = 65536.0;  // 2^16, GradScaler's initial scale
  int64_t good_steps_ = 0;
};

class Precision {
 public:
  /// A mode for tests alone (experiment_config.h).
  static constexpr PrecisionMode kScaledFp32ForTests = PrecisionMode::kScaledFp32ForTests;

  /// fp16 without CUDA is a ConfigError at train.precision.
  Precision(PrecisionMode mode, torch::Device device);

  /// Autocast for the forward pass while alive (nothing for fp32).
  class Autocast {
   public:
    Autocast(PrecisionMode mode, torch::Device device);
    ~Autocast();
    Autocast(const Autocast&) = delete;
    Autocast& operator=(const Autocast&) = delete;

   private:
    bool active_ = false, cuda_ = false, was_enabled_ = false;
  };
  Autocast autocast() const { return Autocast(mode_, device_); }

  /// The loss to call backward() on: scaled for fp16.
  torch::Tensor scale(const torch::Tensor& loss) const {
    return scales_loss() ? scaler_.scale(loss) : loss;
  }
  /// Unscales the gradients for fp16 (see LossScaler); true otherwise.
  bool unscale(const std::vector<torch::Tensor>& gradients) const {
    return !scales_loss() || scaler_.unscale(gradients);
  }
  void update(bool finite) {
    if (scales_loss()) scaler_.update(finite);
  }
  bool scales_loss() const { return mode_ == PrecisionMode::kFp16 || mode_ == kScaledFp32ForTests; }
  const LossScaler& scaler() const { return scaler_; }
  LossScaler& scaler() { return scaler_; }

 private:
  PrecisionMode mode_;
  torch::Device device_;
  LossScaler scaler_;
};

}  // namespace kiln::engine
