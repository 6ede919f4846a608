#pragma once
// Where a loader stands in its epochs, as checkpoints save it (train_state.json): torch-free, so
// that the train state reads and writes without LibTorch. Thread-safety: a value.

#include <cstdint>

namespace kiln::data {

/// Where a loader stands: the next batch it returns is batch `batch` of epoch `epoch`.
struct LoaderPosition {
  int64_t epoch = 0;
  int64_t batch = 0;
  bool operator==(const LoaderPosition& o) const { return epoch == o.epoch && batch == o.batch; }
};

}  // namespace kiln::data
