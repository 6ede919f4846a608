#include "kiln/engine/device_readings.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <thread>

namespace kiln::engine {

DeviceReadings::DeviceReadings(torch::Device device) : device_(device) {}

DeviceReadings::~DeviceReadings() = default;

void DeviceReadings::post(int64_t step, const torch::Tensor& values, unsigned layout) {
  torch::NoGradGuard no_grad;
  torch::Tensor flat = values.to(torch::kFloat).contiguous();
  if (flat.is_cpu()) {  // computed already: nothing to copy
    pending_.push_back({step, flat, nullptr, layout});
    return;
  }
  torch::Tensor host;
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if (it->numel() == flat.numel()) {
      host = *it;
      free_.erase(it);
      break;
    }
  // Pinned memory: a copy into it is queued on the device's stream and the host returns at once.
  if (!host.defined())
    host = torch::empty(flat.sizes(), flat.options().device(torch::kCPU).pinned_memory(true));
  host.copy_(flat, /*non_blocking=*/true);
  auto copied = std::make_shared<c10::Event>(device_.type());
  copied->record(c10::impl::VirtualGuardImpl(device_.type()).getStream(flat.device()));
  pending_.push_back({step, host, std::move(copied), layout});
}

DeviceReadings::Reading DeviceReadings::read(Pending& pending) {
  if (pending.copied)
    // LibTorch 1.x's events cannot be waited on; the copy is usually done by the time it is read.
    while (!pending.copied->query()) std::this_thread::yield();
  const float* values = pending.host.data_ptr<float>();
  Reading reading{pending.step, std::vector<double>(values, values + pending.host.numel()),
                  pending.layout};
  if (pending.copied) free_.push_back(pending.host);
  return reading;
}

std::vector<DeviceReadings::Reading> DeviceReadings::take_through(int64_t step) {
  std::vector<Reading> taken;
  while (!pending_.empty() && pending_.front().step <= step) {
    taken.push_back(read(pending_.front()));
    pending_.pop_front();
  }
  return taken;
}

void DeviceReadings::clear() { pending_.clear(); }

}  // namespace kiln::engine
