// crossed: every combination of the values of several categorical features, hashed into buckets
// (tf.feature_column.crossed_column), one-hot: what a wide linear model learns interactions from.

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_column.h"

namespace kiln::tabular {
namespace {

struct CrossedOptions {
  std::vector<std::string> features;
  int64_t hash_buckets = 0;
  void describe(Schema& s) {
    s.field("features", features, "The categorical features crossed (two or more).")
        .require()
        .check([](const std::vector<std::string>& f) { return f.size() >= 2; }, "of two or more");
    s.field("hash_buckets", hash_buckets, "Buckets the combinations are hashed into.")
        .require()
        .min(1);
  }
};

class CrossedColumn : public FeatureColumn {
 public:
  CrossedColumn(const CrossedOptions& o, const std::string&) : o_(o) {}

  std::vector<std::string> features() const override { return o_.features; }
  int64_t width() const override { return o_.hash_buckets; }

  void write(const io::Features& example, const io::RecordLocation& where,
             float* out) const override {
    std::fill(out, out + o_.hash_buckets, 0.0f);
    // The crossed keys so far: "a_X_b" for each combination, as TensorFlow joins them.
    std::vector<std::string> keys = {""};
    for (size_t f = 0; f < o_.features.size(); ++f) {
      const io::Feature* feature = find_feature(example, o_.features[f]);
      if (!feature) return;  // a missing feature crosses into nothing
      std::vector<std::string> grown;
      for (const std::string& value : category_values(*feature, o_.features[f], where))
        for (const std::string& key : keys) grown.push_back(f == 0 ? value : key + "_X_" + value);
      keys = std::move(grown);
    }
    for (const std::string& key : keys) out[stable_hash(key) % uint64_t(o_.hash_buckets)] = 1.0f;
  }

 private:
  CrossedOptions o_;
};

}  // namespace

KILN_REGISTER(column_registry, "crossed", CrossedColumn, CrossedOptions,
              "Combinations of categorical features, hashed into buckets, one-hot.");

}  // namespace kiln::tabular
