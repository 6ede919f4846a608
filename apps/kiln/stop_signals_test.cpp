// kiln serve's and kiln board's wait for SIGINT or SIGTERM: a signal that lands on a thread that
// never blocked it (as OpenBLAS's, started before main) reaches wait() instead of ending the
// process, and so does one sent to the process before wait() began.

#include "apps/kiln/stop_signals.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <csignal>
#include <future>
#include <thread>

namespace kiln {
namespace {

TEST(StopSignals, ASignalOnAThreadThatNeverBlockedItReachesWait) {
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();
  // Started before the signals are blocked, like a library's thread.
  std::thread early([started] {
    started.wait();
    pthread_kill(pthread_self(), SIGTERM);
  });
  StopSignals stops;
  go.set_value();
  EXPECT_EQ(stops.wait(), SIGTERM);
  early.join();
}

TEST(StopSignals, ASignalSentBeforeWaitIsKeptForIt) {
  StopSignals stops;
  ::kill(::getpid(), SIGINT);
  EXPECT_EQ(stops.wait(), SIGINT);
}

}  // namespace
}  // namespace kiln
