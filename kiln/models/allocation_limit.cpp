#include "kiln/models/allocation_limit.h"

#include <c10/core/CPUAllocator.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <system_error>

#include "kiln/core/error.h"

namespace kiln::models {
namespace {

thread_local AllocationLimit* active_limit = nullptr;

}  // namespace

// Forwards every CPU allocation to the allocator torch had, charging the thread's limit first.
// Installed once, on the first limit, and kept for the life of the process: tensors it handed
// out are freed through their own deleters, which are the inner allocator's.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t bytes) const override {
    if (active_limit) active_limit->charge(bytes);
    return inner_->allocate(bytes);
  }
  c10::DeleterFnPtr raw_deleter() const override { return inner_->raw_deleter(); }

 private:
  c10::Allocator* inner_;
};

namespace {

void install_counting_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: tensors may outlive every static.
    static auto* counting = new CountingAllocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(counting, /*priority=*/1);
  });
}

}  // namespace

AllocationLimit::AllocationLimit(size_t bytes, std::string file, std::string what)
    : bytes_(bytes), file_(std::move(file)), what_(std::move(what)), outer_(active_limit) {
  install_counting_allocator();
  active_limit = this;
}

AllocationLimit::~AllocationLimit() { active_limit = outer_; }

void AllocationLimit::charge(size_t bytes) {
  if (bytes > bytes_ - used_)
    throw DataError(file_, -1, -1,
                    fmt::format("{} would take more than {} MiB ({} MiB so far, {} MiB more "
                                "asked), far more than its weights need",
                                what_, bytes_ >> 20, used_ >> 20, bytes >> 20));
  used_ += bytes;
}

size_t build_allowance(const std::string& weights) {
  std::error_code error;
  uintmax_t size = std::filesystem::file_size(weights, error);
  if (error) size = 0;
  return 3 * size_t(size) + (size_t{256} << 20);
}

}  // namespace kiln::models
