#include "kiln/engine/pipeline_bench.h"

namespace kiln::engine {

PipelineRate time_pipeline(Experiment& experiment, const std::string& split, int64_t epochs,
                           const Clock& clock) {
  experiment.dataset(split);
  PipelineRate rate;
  double start = clock();
  data::Loader loader = experiment.loader(split);
  for (; rate.epochs < epochs; ++rate.epochs) {
    loader.start_epoch(rate.epochs);
    while (auto batch = loader.next()) {
      rate.batches += 1;
      rate.examples += batch->size();
    }
  }
  rate.seconds = clock() - start;
  return rate;
}

}  // namespace kiln::engine
