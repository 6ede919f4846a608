#include "kiln/engine/train_options.h"

namespace kiln::engine {

namespace {

bool non_negative_scales(const std::map<std::string, double>& scales) {
  for (const auto& entry : scales)
    if (entry.second < 0) return false;
  return true;
}

}  // namespace

void TrainOptions::describe(Schema& s) {
  s.field("max", max, "When training ends: steps, epochs, samples or time.");
  s.field("validate_every", validate_every, "How often to evaluate on data.val.");
  s.field("log_every", log_every, "How often to log training loss and throughput.");
  s.field("monitor", monitor, "The metric that decides the best result, e.g. val/accuracy.");
  s.field("mode", mode, "Whether the monitored metric is better lower or higher.");
  s.field("freeze", freeze,
          "Dotted module or parameter paths that do not train (e.g. [layer1, conv1]); frozen "
          "modules also keep their batchnorm statistics.");
  s.field("lr_scales", lr_scales,
          "Learning-rate factors by parameter-name pattern, * matching anything (e.g. "
          "{\"fc.*\": 10, \"*\": 1}); the longest matching pattern wins, 1 when none does.")
      .check(non_negative_scales, "with scales >= 0");
  s.field("weight_decay_scales", weight_decay_scales,
          "Weight-decay factors by parameter-name pattern, as lr_scales (e.g. {\"*.bias\": 0} "
          "for no decay on biases); the longest matching pattern wins, 1 when none does.")
      .check(non_negative_scales, "with scales >= 0");
  s.field("deterministic", deterministic,
          "Deterministic kernels only (an error names any op that has none), so that a run on "
          "the same machine and thread count repeats bitwise.");
  s.field("val_steps", val_steps, "Validate on at most this many batches; 0 = all of data.val.")
      .min(0);
  s.field("accumulate", accumulate,
          "Batches whose gradients add up before each optimizer step (a step is one update).")
      .min(1);
  s.field("clip_norm", clip_norm,
          "Scale gradients so their global L2 norm is at most this; 0 = off. The norm before "
          "clipping is logged as train/grad_norm.")
      .min(0);
  s.field("clip_value", clip_value, "Clip each gradient element to [-v, v]; 0 = off.").min(0);
  s.field("on_nan", on_nan,
          "When the loss or gradient norm is NaN/Inf: stop (fail the run), skip_step (no "
          "update; fails after 10 in a row), rewind (reload the last checkpoint and halve the "
          "learning rate; fails after 5 rewinds).");
  s.field("stop_at", stop_at,
          "End training once train.monitor reaches this value (in train.mode's direction).");
  s.field("precision", precision,
          "fp32; bf16 (autocast, CPU or CUDA); fp16 (autocast with loss scaling, CUDA only); "
          "auto: bf16 where the hardware computes it natively (a CPU with AVX512-BF16 or AMX, "
          "a GPU of compute capability 8 or more), fp16 on older GPUs, else fp32.");
  s.field("profile", profile,
          "Steps to profile ({from: 100, to: 110}): RUN/trace.json, a Chrome trace of their data "
          "wait, forward, backward, update and callbacks, and each layer's forward and backward.");
}

void ProfileWindow::describe(Schema& s) {
  s.field("from", from, "The first step profiled (steps count from 1).").min(1);
  s.field("to", to, "The last step profiled; at least `from`.").min(1);
}

}  // namespace kiln::engine
