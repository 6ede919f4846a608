#pragma once
// How `kiln serve` and `kiln board` wait for SIGINT or SIGTERM. Blocking the signals and calling
// sigwait() is not enough: threads that libraries start before main (OpenBLAS starts its pool
// as LibTorch loads) never blocked them, and a signal the kernel hands to one of those took its
// default action, ending the process with status 143 before the server had drained. So a handler
// takes each one, on whichever thread it lands, and writes it to a pipe that wait() reads.
// Thread-safety: one StopSignals at a time, built and waited on by the main thread.

namespace kiln {

class StopSignals {
 public:
  /// Installs the handler and blocks the signals in this thread and the threads it starts from
  /// now on, so that they interrupt no server code.
  StopSignals();
  /// Puts back the handlers there were.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// Waits for SIGINT or SIGTERM, also one that came before the call, and returns it.
  int wait();
};

}  // namespace kiln
