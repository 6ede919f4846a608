#pragma once
// Counts the operators LibTorch dispatches while a counter is alive, by name, through
// RecordFunction callbacks: what a training step costs in launches, and whether it reads a value
// back from the device (aten::_local_scalar_dense, the operator behind .item()), measured on the
// CPU. Counts the operators dispatched on the thread that made it (the callback is that
// thread's), not those of other threads (the loader's workers).
// Thread-safety: one counter at a time, made and destroyed on the same thread.

#include <ATen/record_function.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::testing {

class OperatorCounter {
 public:
  OperatorCounter();
  ~OperatorCounter();
  OperatorCounter(const OperatorCounter&) = delete;
  OperatorCounter& operator=(const OperatorCounter&) = delete;

  /// Counting on (the default) or paused.
  void enable(bool on);
  /// Forgets the counts so far.
  void reset();
  /// How often `name` (e.g. "aten::_local_scalar_dense") was dispatched while counting.
  int64_t count(const std::string& name) const;
  /// Every operator dispatched while counting.
  int64_t total() const;
  /// The counts by name.
  std::map<std::string, int64_t> counts() const;

 private:
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& call);
  void add(const char* name);

  at::CallbackHandle handle_;
  std::thread::id owner_ = std::this_thread::get_id();
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> counts_;
  bool enabled_ = true;
};

}  // namespace kiln::testing
