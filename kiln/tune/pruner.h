#pragma once
// Pruners stop unpromising trials early (`tune.pruner`): asha, median, none. A trial reports its
// metric at every validation (into the study database); the pruner compares it with what the
// other trials reported at the same point and may say why it should stop. The trial then ends
// through the trainer's ordinary early-stop path, with a checkpoint, as `pruned`.
// Torch-free. Thread-safety: prune() is const; one call per validation of a trial.

#include <optional>
#include <string>
#include <vector>

#include "kiln/core/registry.h"
#include "kiln/tune/study.h"

namespace kiln::tune {

class Pruner {
 public:
  virtual ~Pruner() = default;
  /// Why trial `number` (its last report just made) should stop, or nothing to go on.
  /// `trials` is the whole study, by number; `maximize` says which way the metric is better.
  virtual std::optional<std::string> prune(int64_t number, const std::vector<TrialRecord>& trials,
                                           bool maximize) const = 0;
};

using PrunerRegistry = Registry<Pruner>;
PrunerRegistry& pruner_registry();

/// A trial's reported value at `resource` (epochs or steps): the first report at or past it.
std::optional<double> value_at(const TrialRecord& trial, double resource, bool epochs);

/// Whether `a` is better than `b`.
inline bool better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

}  // namespace kiln::tune
