#include "kiln/net/wake_signal.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"

namespace kiln::net {
namespace {

thread_local DeferredWakes* current_scope = nullptr;

}  // namespace

WakeSignal::WakeSignal() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) throw Error(fmt::format("kiln serve: eventfd: {}", std::strerror(errno)));
}

WakeSignal::~WakeSignal() { close(fd_); }

void WakeSignal::raise() {
  uint64_t one = 1;
  ssize_t written = write(fd_, &one, sizeof one);
  (void)written;  // fails only when the counter is full: the loop is awake anyway
}

void WakeSignal::clear() {
  uint64_t count = 0;
  ssize_t got = read(fd_, &count, sizeof count);  // nothing to read: it was not raised
  (void)got;
}

DeferredWakes::DeferredWakes() : outer_(current_scope) { current_scope = this; }

DeferredWakes::~DeferredWakes() {
  current_scope = outer_;
  for (const auto& signal : held_) signal->raise();
}

void DeferredWakes::wake(const std::shared_ptr<WakeSignal>& signal) {
  DeferredWakes* scope = current_scope;
  if (!scope) return signal->raise();
  while (scope->outer_) scope = scope->outer_;
  // Held as shared pointers: the loop may be gone by the end of the scope, its eventfd not.
  if (std::find(scope->held_.begin(), scope->held_.end(), signal) == scope->held_.end())
    scope->held_.push_back(signal);
}

}  // namespace kiln::net
