#pragma once
// The `data:` section of a config: the datasets of each split, batching, the workers that make
// batches, caching, skipping and taking, the batch transforms, the feature columns and the derived
// features. The experiment builds its loaders from these; experiment/experiment_config.h places
// the section in the whole config. Thread-safety: values.

#include <cstdint>

#include "kiln/core/registry.h"
#include "kiln/core/schema.h"
#include "kiln/tabular/derived_features.h"

namespace kiln::data {

struct TransformLists {
  ComponentList train{"transform"};
  ComponentList eval{"transform"};
  void describe(Schema& s);
};

/// Where a split's examples are held between epochs (data.cache).
enum class DataCache { kNone, kDevice };
inline EnumNameList<DataCache> enum_names(DataCache) {
  return {{DataCache::kNone, "none"}, {DataCache::kDevice, "device"}};
}

struct DataOptions {
  ComponentSpec train{"dataset"};
  ComponentSpec val{"dataset"};
  ComponentSpec test{"dataset"};
  int64_t batch_size = 128;
  double val_fraction = 0.0;
  int64_t eval_batch_size = 0;
  bool shuffle = true;
  bool drop_last = false;
  bool batch_per_rank = false;
  int64_t workers = 2;
  int64_t prefetch = 4;
  DataCache cache = DataCache::kNone;
  int64_t skip = 0;
  int64_t take = 0;
  int64_t labels_per_class = 0;
  double labelled_share = 0.25;
  TransformLists transforms;
  ComponentMap columns{"column"};
  tabular::DerivedFeatures derived;
  void describe(Schema& s);
};

}  // namespace kiln::data
