#include "tests/support/operator_counter.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "kiln/core/error.h"

namespace kiln::testing {
namespace {

// RecordFunction takes a plain function: the counter it reports to.
std::atomic<OperatorCounter*> active_counter{nullptr};

}  // namespace

OperatorCounter::OperatorCounter() {
  OperatorCounter* none = nullptr;
  KILN_ASSERT(active_counter.compare_exchange_strong(none, this));
  try {
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&OperatorCounter::on_start).scopes({at::RecordScope::FUNCTION}));
  } catch (...) {
    active_counter.store(nullptr);
    throw;
  }
}

OperatorCounter::~OperatorCounter() {
  // The callback is the constructing thread's: removed from another, it would stay there.
  if (std::this_thread::get_id() != owner_) {
    std::fputs("OperatorCounter destroyed on another thread than its own\n", stderr);
    std::abort();
  }
  at::removeCallback(handle_);
  active_counter.store(nullptr);
}

std::unique_ptr<at::ObserverContext> OperatorCounter::on_start(const at::RecordFunction& call) {
  if (OperatorCounter* counter = active_counter.load()) counter->add(call.name());
  return nullptr;
}

void OperatorCounter::add(const char* name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (enabled_) counts_[name] += 1;
}

void OperatorCounter::enable(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  enabled_ = on;
}

void OperatorCounter::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  counts_.clear();
}

int64_t OperatorCounter::count(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = counts_.find(name);
  return found == counts_.end() ? 0 : found->second;
}

int64_t OperatorCounter::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t sum = 0;
  for (const auto& [name, count] : counts_) sum += count;
  return sum;
}

std::map<std::string, int64_t> OperatorCounter::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace kiln::testing
