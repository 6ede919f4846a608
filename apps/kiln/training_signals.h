#pragma once
// How `kiln train` takes SIGTERM and SIGINT: a handler sets a flag that the trainer reads after
// each step, to save a checkpoint and stop (exit 128 + the signal).
// - SIGINT's handler is reset after the first one, so a second Ctrl-C ends the process at once.
// - SIGTERM's is not: a parent's death (core/parent_death.h) sends it once for each of the dying
//   parent's threads, and the second must not end the run before its checkpoint. Schedulers
//   (Kubernetes, Slurm, torchrun) follow SIGTERM with SIGKILL anyway.
// Thread-safety: one TrainingSignals at a time, built by the main thread.

#include <atomic>

namespace kiln {

class TrainingSignals {
 public:
  /// Installs the handlers, with the flag at 0.
  TrainingSignals();
  /// Puts back the default actions.
  ~TrainingSignals();
  TrainingSignals(const TrainingSignals&) = delete;
  TrainingSignals& operator=(const TrainingSignals&) = delete;

  /// The first signal received, or 0: what TrainRequest::stop_signal points at.
  const std::atomic<int>* received() const;
};

}  // namespace kiln
