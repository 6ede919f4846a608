// crossed: every combination of the values of several categorical features, hashed into buckets
// (tf.feature_column.crossed_column), one-hot (what a wide linear model learns interactions from)
// or as the bucket's index, for an embedding (tf.feature_column.embedding_column of a cross).
// A name it crosses is a categorical or bucketize column of the input when one is declared under
// it (crossing its categories, or its bucket numbers, as TensorFlow crosses bucketized columns),
// else a raw feature of the records.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_column.h"

namespace kiln::tabular {
namespace {

// More would make combinations no record repeats: each a bucket of its own, learnt from one.
constexpr size_t kMaxCrossed = 32;

enum class CrossOutput { kOneHot, kIndex };
EnumNameList<CrossOutput> enum_names(CrossOutput) {
  return {{CrossOutput::kOneHot, "one_hot"}, {CrossOutput::kIndex, "index"}};
}

struct CrossedOptions {
  std::vector<std::string> features;
  int64_t hash_buckets = 0;
  CrossOutput output = CrossOutput::kOneHot;
  int64_t embedding_dim = 0;
  void describe(Schema& s) {
    s.field("features", features,
            "What is crossed (two or more): categorical or bucketize columns of the input, by "
            "name, or raw features.")
        .require()
        .check([](const std::vector<std::string>& f) { return f.size() >= 2; }, "of two or more")
        .check([](const std::vector<std::string>& f) { return f.size() <= kMaxCrossed; },
               "of at most " + std::to_string(kMaxCrossed) + " names")
        // A feature crossed with itself adds nothing but cost: a hand-edited preprocessing.json
        // naming one feature 100 times was served without a word.
        .check(
            [](const std::vector<std::string>& f) {
              return std::set<std::string>(f.begin(), f.end()).size() == f.size();
            },
            "with no name twice");
    s.field("hash_buckets", hash_buckets, "Buckets the combinations are hashed into.")
        .require()
        .in_range(1, kMaxBuckets);
    s.field("output", output,
            "one_hot, or index: the combination's bucket, for an embedding layer (a record "
            "missing a crossed value gives -1, which embeds to zeros).");
    s.field("embedding_dim", embedding_dim,
            "With output: index, the width of the embedding the dnn and wide_deep models look "
            "the bucket up in (0: none; such a model then refuses the column).")
        .min(0);
  }
};

class CrossedColumn : public FeatureColumn {
 public:
  CrossedColumn(const CrossedOptions& o, const std::string&)
      : o_(o), sources_(o.features.size(), nullptr) {
    if (o.embedding_dim > 0 && o.output != CrossOutput::kIndex)
      throw ConfigError("embedding_dim", "", "an embedding looks up an index: give output: index");
  }

  void link(const std::function<const FeatureColumn*(const std::string&)>& column,
            const std::string&) override {
    for (size_t i = 0; i < o_.features.size(); ++i) {
      // Other columns (numeric ones) leave the name to the raw feature, as before.
      const FeatureColumn* found = column(o_.features[i]);
      if (found && found->crossable()) sources_[i] = found;
    }
  }

  std::vector<std::string> features() const override {
    std::vector<std::string> read;
    std::unordered_set<std::string> seen;  // a cross of many features: no search of `read` each
    for (size_t i = 0; i < o_.features.size(); ++i)
      for (const std::string& f :
           sources_[i] ? sources_[i]->features() : std::vector<std::string>{o_.features[i]})
        if (seen.insert(f).second) read.push_back(f);
    return read;
  }
  int64_t width() const override { return index() ? 1 : o_.hash_buckets; }
  int64_t cardinality() const override { return index() ? o_.hash_buckets : 0; }
  int64_t embedding_dim() const override { return o_.embedding_dim; }

  void write(const io::Features& example, const io::RecordLocation& where,
             float* out) const override {
    std::vector<std::string> keys = crossed_keys(example, where);
    if (index()) {
      if (keys.size() > 1)
        throw DataError(where.file, where.record, where.offset,
                        fmt::format("the cross of {} has {} combinations (a feature of several "
                                    "values); output: index takes one, give output: one_hot",
                                    fmt::join(o_.features, ", "), keys.size()));
      out[0] = keys.empty() ? -1.0f : float(bucket(keys[0]));
      return;
    }
    std::fill(out, out + o_.hash_buckets, 0.0f);
    for (const std::string& key : keys) out[bucket(key)] = 1.0f;
  }

 private:
  // Combinations one example may cross into: two features of 125,000 values each, one request,
  // would otherwise make 1.5e10 strings.
  static constexpr size_t kMaxCombinations = size_t(1) << 16;

  bool index() const { return o_.output == CrossOutput::kIndex; }
  int64_t bucket(const std::string& key) const {
    return int64_t(stable_hash(key) % uint64_t(o_.hash_buckets));
  }

  // Every combination of the crossed values, "a_X_b" as TensorFlow joins them; none when a
  // crossed value is missing (it crosses into nothing).
  std::vector<std::string> crossed_keys(const io::Features& example,
                                        const io::RecordLocation& where) const {
    std::vector<std::vector<std::string>> all;
    size_t combinations = 1;  // counted before any is made: a served example is anyone's
    for (size_t f = 0; f < o_.features.size(); ++f) {
      all.push_back(values_of(f, example, where));
      if (all.back().empty()) return {};
      combinations = all.back().size() > kMaxCombinations / combinations
                         ? kMaxCombinations + 1
                         : combinations * all.back().size();
    }
    if (combinations > kMaxCombinations)
      throw DataError(where.file, where.record, where.offset,
                      fmt::format("the cross of {} has more than {} combinations of values in one "
                                  "example (features of many values each); kiln crosses at most "
                                  "that many",
                                  fmt::join(o_.features, ", "), kMaxCombinations));
    std::vector<std::string> keys = {""};
    for (size_t f = 0; f < o_.features.size(); ++f) {
      const std::vector<std::string>& values = all[f];
      std::vector<std::string> grown;
      for (const std::string& value : values)
        for (const std::string& key : keys) grown.push_back(f == 0 ? value : key + "_X_" + value);
      keys = std::move(grown);
    }
    return keys;
  }

  std::vector<std::string> values_of(size_t f, const io::Features& example,
                                     const io::RecordLocation& where) const {
    if (sources_[f]) return sources_[f]->cross_values(example, where);
    const io::Feature* feature = find_feature(example, o_.features[f]);
    if (!feature) return {};
    return category_values(*feature, o_.features[f], where);
  }

  CrossedOptions o_;
  std::vector<const FeatureColumn*> sources_;  // by feature: the column crossed, or null (raw)
};

}  // namespace

KILN_REGISTER(column_registry, "crossed", CrossedColumn, CrossedOptions,
              "Combinations of categorical features, hashed into buckets: one-hot, or the "
              "bucket's index for an embedding.");

}  // namespace kiln::tabular
