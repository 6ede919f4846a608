#include "kiln/serving/answer_queue.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"

namespace kiln::serving {

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

}  // namespace kiln::serving
