// bucketize: a number as the bucket it falls in, between explicit boundaries or the training
// split's quantiles; one-hot (tf.feature_column.bucketized_column) or the bucket's index.

#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_column.h"

namespace kiln::tabular {
namespace {

enum class BucketOutput { kOneHot, kIndex };
EnumNameList<BucketOutput> enum_names(BucketOutput) {
  return {{BucketOutput::kOneHot, "one_hot"}, {BucketOutput::kIndex, "index"}};
}

struct BucketizeOptions {
  std::string feature;
  std::vector<double> boundaries;
  int64_t quantiles = 0;
  Json missing = nullptr;
  BucketOutput output = BucketOutput::kOneHot;
  void describe(Schema& s) {
    s.field("feature", feature,
            "The feature read (one number per example); \"\": the column's name.");
    s.field("boundaries", boundaries,
            "Increasing bucket edges: [b0, b1] makes (-inf, b0), [b0, b1), [b1, inf).")
        .check(
            [](const std::vector<double>& b) {
              return std::is_sorted(b.begin(), b.end()) &&
                     std::adjacent_find(b.begin(), b.end()) == b.end();
            },
            "strictly increasing");
    s.field("quantiles", quantiles,
            "N: N buckets of about equal counts, edges at the training split's quantiles (as "
            "numpy.quantile; equal edges merged). 0: use boundaries.")
        .min(0);
    s.field("missing", missing,
            "A record without the feature: the bucket of a number, or of the training split's "
            "mean, median or mode; bucket: a bucket of its own, after the others; null: an "
            "error.")
        .check(
            [](const Json& m) {
              return m.is_null() || m.is_number() || m == "mean" || m == "median" || m == "mode" ||
                     m == "bucket";
            },
            "a number, mean, median, mode, bucket or null");
    s.field("output", output, "one_hot (a 1 at the bucket) or index (the bucket's number).");
  }
};

class BucketizeColumn;

// The values of the training split, for quantiles or a mean or median to fill gaps with.
struct BucketValues : ColumnStatistics {
  explicit BucketValues(const BucketizeColumn& c) : column(c) {}
  void add(const io::Features& example, const io::RecordLocation& where) override;
  void merge(ColumnStatistics& other) override {
    auto& more = static_cast<BucketValues&>(other).values;
    values.insert(values.end(), more.begin(), more.end());
  }
  const BucketizeColumn& column;
  std::vector<double> values;
};

class BucketizeColumn : public FeatureColumn {
 public:
  BucketizeColumn(const BucketizeOptions& o, const std::string& name)
      : o_(o), feature_(o.feature.empty() ? name : o.feature), boundaries_(o.boundaries) {
    if (o.missing.is_number()) missing_ = o.missing.get<double>();
    if ((o.quantiles > 0) == !o.boundaries.empty())
      throw ConfigError("quantiles", "", "give either boundaries or quantiles (N >= 2), not both");
    if (o.quantiles == 1)
      throw ConfigError("quantiles", "", "one quantile bucket is no split; give N >= 2");
  }

  std::vector<std::string> features() const override { return {feature_}; }
  int64_t width() const override { return o_.output == BucketOutput::kIndex ? 1 : buckets(); }

  std::unique_ptr<ColumnStatistics> statistics() const override {
    if (o_.quantiles == 0 && !fills_from_data()) return nullptr;
    return std::make_unique<BucketValues>(*this);
  }

  void fit(ColumnStatistics& gathered) override {
    std::vector<double>& values = static_cast<BucketValues&>(gathered).values;
    if (values.empty()) {  // nothing to learn from: one bucket, gaps filled with 0
      warn("no training record has a value of \"" + feature_ +
           "\": " + (o_.quantiles > 0 ? "one bucket, no quantiles" : "its buckets as given") +
           (fills_from_data() ? ", and a missing value is 0" : ""));
      if (fills_from_data()) missing_ = 0.0;
      if (o_.quantiles > 0) boundaries_.clear();
      return;
    }
    std::sort(values.begin(), values.end());
    if (fills_from_data())
      missing_ = o_.missing == "median" ? linear_quantile(values, 0.5)
                 : o_.missing == "mode" ? most_frequent(values)
                                        : mean_of(values);
    if (o_.quantiles == 0) return;
    boundaries_.clear();
    for (int64_t i = 1; i < o_.quantiles; ++i) {
      double edge = linear_quantile(values, double(i) / double(o_.quantiles));
      if (boundaries_.empty() || edge > boundaries_.back()) boundaries_.push_back(edge);
    }
  }

  Json fitted() const override {
    Json fitted = Json::object();
    if (o_.quantiles > 0) fitted["boundaries"] = boundaries_;
    if (fills_from_data() && missing_) fitted["missing"] = *missing_;
    return fitted.empty() ? Json() : fitted;
  }

  void restore(const Json& fitted, const std::string& path) override {
    if (fills_from_data()) {
      missing_ = fitted_fill(fitted, path);
    }
    if (o_.quantiles == 0) return;
    std::vector<double> edges = fitted_numbers(fitted, "boundaries", path);
    if (!std::is_sorted(edges.begin(), edges.end()) ||
        std::adjacent_find(edges.begin(), edges.end()) != edges.end())
      throw ConfigError(path, "", "\"boundaries\" must increase strictly");
    boundaries_ = std::move(edges);
  }

  // Quantiles fitted from nothing are none; a fill from nothing is 0 (fit()).
  std::string contradicted_kind(const std::string&, io::Feature::Kind kind) const override {
    if (kind != io::Feature::Kind::kNone) return "";
    if (o_.quantiles > 0 && !boundaries_.empty())
      return "its quantile boundaries were fitted from the training records' values";
    if (fills_from_data() && missing_ && *missing_ != 0)
      return "its fill for a missing value was fitted from the training records' values";
    return "";
  }

  bool crossable() const override { return true; }
  // The bucket's number, as TensorFlow crosses a bucketized column.
  std::vector<std::string> cross_values(const io::Features& example,
                                        const io::RecordLocation& where) const override {
    if (!value(example, where) && !missing_ && !own_bucket()) return {};
    return {std::to_string(bucket_or_missing(example, where))};
  }

  // The bucket of the record's value, or of its fill, or the bucket of its own of a missing one
  // (missing: bucket).
  int64_t bucket_or_missing(const io::Features& example, const io::RecordLocation& where) const {
    std::optional<double> x = value(example, where);
    if (!x) x = missing_;
    if (!x && own_bucket()) return int64_t(boundaries_.size()) + 1;
    if (!x)
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ +
                          "\" is missing; give the column missing: VALUE, mean, median, mode or "
                          "bucket");
    return bucket_of(*x, where);
  }

  // The feature's one value, or none when the record lacks it.
  std::optional<double> value(const io::Features& example, const io::RecordLocation& where) const {
    const io::Feature* feature = find_feature(example, feature_);
    if (!feature) return std::nullopt;
    if (feature->size() != 1 || feature->kind == io::Feature::Kind::kBytes)
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\": bucketize reads one number, got " +
                          std::to_string(feature->size()) + " values of " +
                          io::feature_kind_name(feature->kind));
    return feature->kind == io::Feature::Kind::kFloat ? double(feature->floats[0])
                                                      : double(feature->ints[0]);
  }

  void write(const io::Features& example, const io::RecordLocation& where,
             float* out) const override {
    int64_t bucket = bucket_or_missing(example, where);
    if (o_.output == BucketOutput::kIndex) {
      out[0] = float(bucket);
      return;
    }
    std::fill(out, out + width(), 0.0f);
    out[bucket] = 1.0f;
  }

 private:
  bool own_bucket() const { return o_.missing == "bucket"; }
  bool fills_from_data() const { return o_.missing.is_string() && !own_bucket(); }
  int64_t buckets() const { return int64_t(boundaries_.size()) + 1 + (own_bucket() ? 1 : 0); }

  static double mean_of(const std::vector<double>& values) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / double(values.size());
  }

  static double fitted_fill(const Json& fitted, const std::string& path) {
    if (!fitted.is_object() || !fitted.contains("missing") || !fitted["missing"].is_number())
      throw ConfigError(path, "", "expected \"missing\": the number that fills a gap");
    return fitted["missing"].get<double>();
  }

  // The number of edges at or below x: a value on an edge goes to the bucket above it.
  int64_t bucket_of(double x, const io::RecordLocation& where) const {
    if (std::isnan(x))
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\" is NaN, which falls in no bucket");
    return std::upper_bound(boundaries_.begin(), boundaries_.end(), x) - boundaries_.begin();
  }

  BucketizeOptions o_;
  std::string feature_;
  std::vector<double> boundaries_;
  std::optional<double> missing_;  // what fills a gap: given, or fitted (mean, median)
};

void BucketValues::add(const io::Features& example, const io::RecordLocation& where) {
  // A NaN falls in no bucket (write() refuses it) and has no place in a sorted list.
  std::optional<double> x = column.value(example, where);
  if (x && !std::isnan(*x)) values.push_back(*x);
}

}  // namespace

KILN_REGISTER(column_registry, "bucketize", BucketizeColumn, BucketizeOptions,
              "A number as its bucket, between given boundaries or the training quantiles.");

}  // namespace kiln::tabular
