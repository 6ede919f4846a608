#include "apps/kiln/training_signals.h"

#include <csignal>

namespace kiln {
namespace {

std::atomic<int> stop_signal{0};

extern "C" void on_stop_signal(int signal) { stop_signal.store(signal); }

}  // namespace

TrainingSignals::TrainingSignals() {
  stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  action.sa_flags = SA_RESETHAND;
  ::sigaction(SIGINT, &action, nullptr);
}

TrainingSignals::~TrainingSignals() {
  for (int signal : {SIGTERM, SIGINT}) std::signal(signal, SIG_DFL);
}

const std::atomic<int>* TrainingSignals::received() const { return &stop_signal; }

}  // namespace kiln
