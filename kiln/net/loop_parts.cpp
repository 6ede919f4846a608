#include "kiln/net/loop_parts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"

namespace kiln::net {

Epoll::Epoll() : fd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (fd_ < 0) throw Error(fmt::format("kiln serve: epoll: {}", std::strerror(errno)));
}

Epoll::~Epoll() { close(fd_); }

void Epoll::watch(int fd, uint64_t tag, uint32_t events, int operation) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (epoll_ctl(fd_, operation, fd, &event) != 0 && operation != EPOLL_CTL_DEL)
    throw Error(fmt::format("kiln serve: epoll_ctl: {}", std::strerror(errno)));
}

int Epoll::wait(std::vector<epoll_event>& events, int timeout_ms) {
  int ready = epoll_wait(fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
  if (ready >= 0) return ready;
  if (errno == EINTR) return 0;
  throw Error(fmt::format("kiln serve: epoll_wait: {}", std::strerror(errno)));
}

void LoopPhase::serve(const std::function<void()>& loop) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_asked_) return;
    phase_ = Phase::kServing;
  }
  try {
    loop();
  } catch (...) {
    end();
    throw;
  }
  end();
}

void LoopPhase::stop(const std::function<void()>& wake) {
  stop_asked_ = true;
  wake();
  std::unique_lock<std::mutex> lock(mutex_);
  ended_.wait(lock, [&] { return phase_ != Phase::kServing; });
}

void LoopPhase::end() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = Phase::kEnded;
  }
  ended_.notify_all();
}

SendEnd send_pending(int fd, const std::string& out, size_t& sent,
                     std::chrono::steady_clock::time_point& last_sent) {
  while (sent < out.size()) {
    ssize_t now = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (now > 0) {
      sent += size_t(now);
      last_sent = std::chrono::steady_clock::now();
    } else if (now < 0 && errno == EINTR) {
      continue;
    } else if (now < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return SendEnd::kWouldBlock;
    } else {
      return SendEnd::kFailed;
    }
  }
  return SendEnd::kAllSent;
}

}  // namespace kiln::net
