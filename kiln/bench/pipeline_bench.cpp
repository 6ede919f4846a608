#include "kiln/bench/pipeline_bench.h"

namespace kiln::bench {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

PipelineRate time_pipeline(Experiment& experiment, const std::string& split, int64_t epochs,
                           const Clock& clock, int64_t max_batches) {
  experiment.dataset(split);
  PipelineRate rate;
  double start = clock();
  data::Loader loader = experiment.loader(split);
  auto enough = [&] { return max_batches > 0 && rate.batches >= max_batches; };
  for (; rate.epochs < epochs && !enough(); ++rate.epochs) {
    loader.start_epoch(rate.epochs);
    while (!enough()) {
      std::optional<data::Batch> batch = loader.next();
      if (!batch) break;
      rate.batches += 1;
      rate.examples += batch->size();
    }
  }
  rate.seconds = clock() - start;
  return rate;
}

}  // namespace kiln::bench
