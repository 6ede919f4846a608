#include "apps/kiln/stop_signals.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "kiln/core/error.h"

namespace kiln {
namespace {

constexpr int kStops[] = {SIGINT, SIGTERM};
int stop_pipe[2] = {-1, -1};
struct sigaction before[2];

// Async-signal-safe: one write of one byte.
void on_stop(int signal) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] ssize_t written = ::write(stop_pipe[1], &byte, 1);
  errno = saved;
}

sigset_t stops() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : kStops) sigaddset(&set, signal);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  if (::pipe2(stop_pipe, O_CLOEXEC) != 0) throw IoError("make a pipe for", "signals", errno);
  struct sigaction action {};
  action.sa_handler = on_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) ::sigaction(kStops[i], &action, &before[i]);
  sigset_t set = stops();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 2; ++i) ::sigaction(kStops[i], &before[i], nullptr);
  sigset_t set = stops();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::close(stop_pipe[0]);
  ::close(stop_pipe[1]);
  stop_pipe[0] = stop_pipe[1] = -1;
}

int StopSignals::wait() {
  // Taken here too while waiting: one blocked in every thread would otherwise stay pending.
  sigset_t set = stops();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  unsigned char byte = 0;
  ssize_t got = 0;
  do got = ::read(stop_pipe[0], &byte, 1);
  while (got < 0 && errno == EINTR);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return byte;
}

}  // namespace kiln
