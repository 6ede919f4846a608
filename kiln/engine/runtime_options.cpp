#include "kiln/engine/runtime_options.h"

namespace kiln::engine {

void DistributedOptions::describe(Schema& s) {
  s.field("timeout", timeout,
          "Seconds a rank waits for the others, at the start and in each exchange, before the "
          "job fails naming the rank.")
      .check([](double t) { return t > 0; }, "above 0");
  s.field("bucket_mb", bucket_mb, "Megabytes of gradients all-reduced in one exchange.")
      .check([](double mb) { return mb > 0; }, "above 0");
  s.field("overlap", overlap,
          "Start each bucket's exchange as soon as backward has its gradients (true), or all of "
          "them after backward (false).");
  s.field("sync_batch_norm", sync_batch_norm,
          "Normalize each batch norm's training batches by the statistics of the whole job's "
          "batch instead of each rank's share (PyTorch's SyncBatchNorm).");
}

void RuntimeOptions::describe(Schema& s) {
  s.field("device", device, "auto (CUDA when available), cpu or cuda.");
  s.field("threads", threads,
          "Intra-op CPU threads; auto = all cores, shared among the ranks on this machine.");
  s.field("pin_memory", pin_memory,
          "On CUDA, copy each batch to the GPU from page-locked memory on a side stream, "
          "overlapping the steps before it (true), or with ordinary blocking copies (false).");
  s.field("channels_last", channels_last,
          "Store images and convolution kernels channels-last (NHWC), the layout the fastest "
          "GPU convolutions read; auto times a training step of the model both ways at the "
          "start and keeps channels-last where it is at least 5% faster (contiguous under "
          "train.deterministic).");
  s.field("cudnn_benchmark", cudnn_benchmark,
          "On CUDA, time cuDNN's convolution algorithms on each new input shape and keep the "
          "fastest (PyTorch's torch.backends.cudnn.benchmark); always off under "
          "train.deterministic.");
  s.field("distributed", distributed, "Distributed training: timeouts and gradient buckets.");
}

}  // namespace kiln::engine

namespace kiln {

void OptionTraits<engine::AutoCount>::read(const Json& value, engine::AutoCount& out,
                                           const ReadContext& ctx) {
  if (value == "auto") {
    out.value = 0;
  } else if (value.is_number_integer() && value.get<int64_t>() >= 1) {
    out.value = value.get<int64_t>();
  } else {
    ctx.fail("expected \"auto\" or an integer >= 1, got " + value.dump());
  }
}

Json OptionTraits<engine::AutoCount>::write(const engine::AutoCount& value) {
  return value.value == 0 ? Json("auto") : Json(value.value);
}

void OptionTraits<engine::AutoSwitch>::read(const Json& value, engine::AutoSwitch& out,
                                            const ReadContext& ctx) {
  if (value == "auto")
    out = engine::AutoSwitch::kAuto;
  else if (value.is_boolean())
    out = value.get<bool>() ? engine::AutoSwitch::kOn : engine::AutoSwitch::kOff;
  else
    ctx.fail("expected auto, true or false, got " + value.dump());
}

Json OptionTraits<engine::AutoSwitch>::write(engine::AutoSwitch value) {
  if (value == engine::AutoSwitch::kAuto) return "auto";
  return value == engine::AutoSwitch::kOn;
}

}  // namespace kiln
