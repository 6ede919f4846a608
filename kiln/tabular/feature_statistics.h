#pragma once
// What `kiln data stats` shows of a tabular training split: for every feature its type, in how
// many records it appears, how many lack it, the minimum, maximum, mean and standard deviation of
// its numbers, and its most frequent values (strings and integers), in one parallel pass.
// Thread-safety: describe_features() runs its own threads; the result is a value.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/tabular/feature_columns.h"

namespace kiln::tabular {

struct FeatureSummary {
  std::string type;     // bytes_list, float_list, int64_list; "mixed" when records differ
  int64_t records = 0;  // records that have it
  int64_t values = 0;
  // Over every number of a float_list or int64_list feature.
  double min = 0, max = 0, mean = 0, m2 = 0;
  std::unordered_map<std::string, int64_t> counts;  // strings and integers
};

struct FeatureTable {
  int64_t records = 0;
  std::map<std::string, FeatureSummary> features;
};

/// Every feature of every record of `source`, in parts on `threads` threads.
FeatureTable describe_features(const TabularSource& source, int64_t threads);

/// The table as JSON: per feature type, records, missing, values, min/max/mean/std (numbers),
/// distinct and the `top` most frequent values with their counts (strings and integers).
Json feature_table_json(const FeatureTable& table, int64_t top);

}  // namespace kiln::tabular
