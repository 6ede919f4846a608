// kiln train's signals: a repeated SIGTERM (a dying launcher sends one per thread) leaves the
// run to save and stop; a second SIGINT takes its default action.

#include "apps/kiln/training_signals.h"

#include <gtest/gtest.h>

#include <csignal>

namespace kiln {
namespace {

void (*handler_of(int signal))(int) {
  struct sigaction now {};
  ::sigaction(signal, nullptr, &now);
  return now.sa_handler;
}

TEST(TrainingSignals, ARepeatedSigtermKeepsTheHandlerAndTheFirstSignal) {
  TrainingSignals signals;
  EXPECT_EQ(signals.received()->load(), 0);
  ::raise(SIGTERM);  // on this thread: handled before raise returns
  ::raise(SIGTERM);  // with the handler reset, this one would end the test program
  EXPECT_EQ(signals.received()->load(), SIGTERM);
  EXPECT_NE(handler_of(SIGTERM), SIG_DFL);
}

TEST(TrainingSignals, ASecondCtrlCWouldEndTheProcess) {
  TrainingSignals signals;
  ::raise(SIGINT);
  EXPECT_EQ(signals.received()->load(), SIGINT);
  EXPECT_EQ(handler_of(SIGINT), SIG_DFL);
}

TEST(TrainingSignals, TheDefaultsComeBackAfterTraining) {
  { TrainingSignals signals; }
  EXPECT_EQ(handler_of(SIGTERM), SIG_DFL);
  EXPECT_EQ(handler_of(SIGINT), SIG_DFL);
}

}  // namespace
}  // namespace kiln
