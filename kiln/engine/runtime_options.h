#pragma once
// The `runtime:` section of a config: the device, threads, memory layout and distributed settings
// a process runs a config with. Runtime::of (runtime.h) and the job start read these;
// experiment/experiment_config.h places the section in the whole config. Thread-safety: values.

#include <cstdint>

#include "kiln/core/schema.h"

namespace kiln::engine {

/// A count that may be `auto` (0 in memory).
struct AutoCount {
  int64_t value = 0;
};

/// A switch that may be left to the machine: `auto`, true or false.
enum class AutoSwitch { kAuto, kOn, kOff };

/// runtime.device.
enum class DeviceChoice { kAuto, kCpu, kCuda };
inline EnumNameList<DeviceChoice> enum_names(DeviceChoice) {
  return {
      {DeviceChoice::kAuto, "auto"}, {DeviceChoice::kCpu, "cpu"}, {DeviceChoice::kCuda, "cuda"}};
}

/// `runtime.distributed`: how the ranks of a job (docs/distributed.md) meet and talk.
struct DistributedOptions {
  double timeout = 300;          // seconds
  double bucket_mb = 25;         // gradients all-reduced together
  bool overlap = true;           // each bucket's exchange starts while backward still runs
  bool sync_batch_norm = false;  // training batches normalized by the job's statistics
  void describe(Schema& s);
};

struct RuntimeOptions {
  DeviceChoice device = DeviceChoice::kAuto;
  AutoCount threads;
  bool pin_memory = true;  // CUDA: batches copied from page-locked memory on a side stream
  AutoSwitch channels_last = AutoSwitch::kAuto;  // images and convolution kernels stored NHWC
  bool cudnn_benchmark = false;                  // cuDNN times its convolution algorithms per shape
  DistributedOptions distributed;
  void describe(Schema& s);
};

}  // namespace kiln::engine

namespace kiln {
template <>
struct OptionTraits<engine::AutoSwitch> {
  static void read(const Json& value, engine::AutoSwitch& out, const ReadContext& ctx);
  static Json write(engine::AutoSwitch value);
  static std::string type_name(engine::AutoSwitch) { return "auto | true | false"; }
};

template <>
struct OptionTraits<engine::AutoCount> {
  static void read(const Json& value, engine::AutoCount& out, const ReadContext& ctx);
  static Json write(const engine::AutoCount& value);
  static std::string type_name(const engine::AutoCount&) { return "auto | integer"; }
};
}  // namespace kiln
