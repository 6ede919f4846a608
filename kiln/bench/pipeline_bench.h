#pragma once
// Times the input pipeline alone: the batches of a split's loader, as the trainer would get them
// (workers, prefetch, transforms), with no model. `kiln data bench` prints the result; it is the
// kiln side of benchmarks/pipeline.sh.
// Thread-safety: one thread.

#include <string>

#include "kiln/core/console.h"
#include "kiln/experiment/experiment.h"

namespace kiln::bench {

struct PipelineRate {
  int64_t epochs = 0, batches = 0, examples = 0;
  double seconds = 0;
  double examples_per_second() const { return seconds > 0 ? double(examples) / seconds : 0; }
};

/// Builds the dataset of `split` (not timed: reading files into memory is a one-off), then times
/// building its loader and pulling `epochs` epochs of batches from it, or `max_batches` (> 0)
/// if that comes first.
PipelineRate time_pipeline(experiment::Experiment& experiment, const std::string& split,
                           int64_t epochs, const Clock& clock, int64_t max_batches = 0);

}  // namespace kiln::bench
