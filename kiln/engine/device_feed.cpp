#include "kiln/engine/device_feed.h"

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace kiln::engine {
namespace {

// Every 4-D parameter and buffer of `module` stored in `format`.
void store_kernels(torch::nn::Module& module, at::MemoryFormat format) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& parameter : module.parameters())
    if (parameter.dim() == 4) parameter.set_data(parameter.detach().contiguous(format));
  for (torch::Tensor& buffer : module.buffers())
    if (buffer.dim() == 4) buffer.set_data(buffer.detach().contiguous(format));
}

// Copies batches to one CUDA device on a stream of LibTorch's pool, one the training thread never
// runs its kernels on.
class CudaFeed {
 public:
  CudaFeed(torch::Device device, DeviceFeedOptions options)
      : device_(device.type(), device.has_index() ? device.index() : 0),
        options_(options),
        side_(c10::impl::VirtualGuardImpl(device.type()).getStreamFromGlobalPool(device_)) {}

  data::Batch operator()(data::Batch batch) const {
    std::vector<torch::Tensor> copies;
    {
      c10::StreamGuard on_side_stream(side_);
      batch.input = as_sent(batch.input, copies);
      if (options_.channels_last) {
        batch.input = as_channels_last(batch.input);
        copies.push_back(batch.input);
      }
      // A batch gathered on the device (data.cache: device) brings its own host copies.
      if (batch.target.defined() && batch.target.is_cpu()) batch.host_target = batch.target;
      if (batch.host_targets.empty()) batch.host_targets = batch.targets;
      batch.target = as_sent(batch.target, copies);
      for (auto& [name, values] : batch.targets) values = as_sent(values, copies);
    }
    auto copied = std::make_shared<c10::Event>(device_.type());
    copied->record(side_);
    torch::Device device = device_;
    batch.arrive = [copied, copies = std::move(copies), device] {
      c10::impl::VirtualGuardImpl guard(device.type());
      c10::Stream current = guard.getStream(device);
      copied->block(current);
      // Made on the side stream, used on this one: the allocator must not hand their memory to
      // the side stream again before this stream's work with them is done.
      for (const torch::Tensor& tensor : copies)
        guard.recordDataPtrOnStream(tensor.storage().data_ptr(), current);
    };
    return batch;
  }

 private:
  torch::Tensor as_sent(const torch::Tensor& host, std::vector<torch::Tensor>& copies) const {
    if (!host.defined() || !host.is_cpu()) return host;  // there already (data.cache: device)
    // A non-blocking copy from pageable memory would still wait on the host; from pinned memory it
    // returns at once. LibTorch's pinned allocator keeps the host block until the copy is done.
    torch::Tensor sent = options_.pin_memory ? host.pin_memory().to(device_, /*non_blocking=*/true)
                                             : host.to(device_);
    copies.push_back(sent);
    return sent;
  }

  torch::Device device_;
  DeviceFeedOptions options_;
  c10::Stream side_;
};

}  // namespace

std::function<data::Batch(data::Batch)> device_feed(torch::Device device,
                                                    DeviceFeedOptions options) {
  if (device.is_cuda()) return CudaFeed(device, options);
  if (!options.channels_last) return {};
  return [](data::Batch batch) {
    batch.input = as_channels_last(batch.input);
    return batch;
  };
}

torch::Tensor as_channels_last(const torch::Tensor& tensor) {
  if (!tensor.defined() || tensor.dim() != 4) return tensor;
  return tensor.contiguous(at::MemoryFormat::ChannelsLast);
}

void make_channels_last(torch::nn::Module& module) {
  store_kernels(module, at::MemoryFormat::ChannelsLast);
}

void make_channels_first(torch::nn::Module& module) {
  store_kernels(module, at::MemoryFormat::Contiguous);
}

}  // namespace kiln::engine
