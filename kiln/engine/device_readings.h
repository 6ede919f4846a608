#pragma once
// Values a training step leaves on its device that the host needs later (the step's loss and
// gradient norm: the NaN guard, the progress bar, train/grad_norm), copied into host memory as
// the device gets to them. The host goes on queueing the next steps meanwhile and reads each
// value once it is there; it waits only when asked for a step's values that have not arrived.
// On the CPU a value is there as soon as it is computed. No operator reads a value back
// (.item()), so a step that posts its values never stalls the GPU's queue.
// Thread-safety: one thread (the trainer's).

#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace c10 {
class Event;
}

namespace kiln::engine {

class DeviceReadings {
 public:
  explicit DeviceReadings(torch::Device device);
  ~DeviceReadings();
  DeviceReadings(const DeviceReadings&) = delete;
  DeviceReadings& operator=(const DeviceReadings&) = delete;

  struct Reading {
    int64_t step = 0;
    std::vector<double> values;
    unsigned layout = 0;  // as posted: what the values are, in the poster's words
  };
  /// Starts copying `values`, a 1-dimensional floating-point tensor on the device, to the host
  /// for `step`; `layout` comes back with them.
  void post(int64_t step, const torch::Tensor& values, unsigned layout = 0);
  /// The values of every step up to `step` not taken yet, oldest first; waits for those that
  /// have not arrived.
  std::vector<Reading> take_through(int64_t step);
  /// Forgets the values not taken (a rewind abandons their steps).
  void clear();

 private:
  struct Pending {
    int64_t step = 0;
    torch::Tensor host;                  // the values, or where they are being copied to
    std::shared_ptr<c10::Event> copied;  // recorded after the copy; null on the CPU
    unsigned layout = 0;
  };
  Reading read(Pending& pending);

  torch::Device device_;
  std::deque<Pending> pending_;
  std::vector<torch::Tensor> free_;  // host buffers whose copies were read, to use again
};

}  // namespace kiln::engine
