// numeric: numbers as they are or normalized (z-score or min-max, per element), optionally
// clipped and log-scaled first, with a policy for records that lack the feature.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_column.h"

namespace kiln::tabular {
namespace {

enum class Normalize { kNone, kZscore, kMinmax };
EnumNameList<Normalize> enum_names(Normalize) {
  return {
      {Normalize::kNone, "none"}, {Normalize::kZscore, "zscore"}, {Normalize::kMinmax, "minmax"}};
}

enum class Missing { kFail, kMean, kMedian, kMode, kValue };
EnumNameList<Missing> enum_names(Missing) {
  return {{Missing::kFail, "fail"},
          {Missing::kMean, "mean"},
          {Missing::kMedian, "median"},
          {Missing::kMode, "mode"},
          {Missing::kValue, "value"}};
}

struct NumericOptions {
  std::string feature;
  int64_t shape = 1;
  Normalize normalize = Normalize::kNone;
  bool log = false;
  std::vector<double> clip;
  Missing missing = Missing::kFail;
  double value = 0;
  void describe(Schema& s) {
    s.field("feature", feature, "The feature read; \"\": the column's own name.");
    s.field("shape", shape, "Values per example.").min(1);
    s.field("normalize", normalize,
            "none, zscore ((x - mean) / std over the training split) or minmax ((x - min) / "
            "(max - min)); per element, after clip and log.");
    s.field("log", log, "Take log(1 + x) first (counts, prices); x must be > -1.");
    s.field("clip", clip, "[low, high]: values outside are moved to the nearest bound, first.")
        .check(
            [](const std::vector<double>& c) {
              return c.empty() || (c.size() == 2 && c[0] <= c[1]);
            },
            "[low, high] with low <= high");
    s.field("missing", missing,
            "A record without the feature: fail, mean, median or mode (the training split's, "
            "per element, of the raw values), or value.");
    s.field("value", value, "The value of a missing feature with missing: value.");
  }
};

// Count, mean and sum of squared deviations (Chan et al.'s parallel form), minimum and maximum
// of one element, and the mean of its raw values (missing: mean fills with it); the raw values
// themselves when a median or mode fills gaps.
struct Moments {
  double count = 0, mean = 0, m2 = 0, raw_sum = 0;
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  bool keeps_raw = false;
  std::vector<double> raws;

  void add(double raw, double value) {
    if (keeps_raw) raws.push_back(raw);
    count += 1;
    double delta = value - mean;
    mean += delta / count;
    m2 += delta * (value - mean);
    raw_sum += raw;
    low = std::min(low, value);
    high = std::max(high, value);
  }
  void merge(const Moments& other) {
    if (other.count == 0) return;
    raws.insert(raws.end(), other.raws.begin(), other.raws.end());
    double total = count + other.count, delta = other.mean - mean;
    mean += delta * other.count / total;
    m2 += other.m2 + delta * delta * count * other.count / total;
    count = total;
    raw_sum += other.raw_sum;
    low = std::min(low, other.low);
    high = std::max(high, other.high);
  }
};

class NumericColumn;

class NumericStatistics : public ColumnStatistics {
 public:
  explicit NumericStatistics(const NumericColumn& column);
  void add(const io::Features& example, const io::RecordLocation& where) override;
  void merge(ColumnStatistics& other) override {
    auto& more = static_cast<NumericStatistics&>(other).elements;
    for (size_t i = 0; i < elements.size(); ++i) elements[i].merge(more[i]);
  }
  std::vector<Moments> elements;

 private:
  const NumericColumn& column_;
};

class NumericColumn : public FeatureColumn {
 public:
  NumericColumn(const NumericOptions& o, const std::string& name)
      : o_(o), feature_(o.feature.empty() ? name : o.feature) {}

  std::vector<std::string> features() const override { return {feature_}; }
  int64_t width() const override { return o_.shape; }

  std::unique_ptr<ColumnStatistics> statistics() const override {
    if (!learns()) return nullptr;
    return std::make_unique<NumericStatistics>(*this);
  }

  void fit(ColumnStatistics& gathered) override {
    auto& elements = static_cast<NumericStatistics&>(gathered).elements;
    fitted_ = Fitted{};
    for (Moments& m : elements) {
      if (m.count == 0) {  // nothing to learn from: as it is, gaps filled with 0
        warn("no training record has a value of \"" + feature_ +
             "\": it is not normalized, and a missing value is 0");
        fitted_.shift.push_back(0);
        fitted_.scale.push_back(1);
        fitted_.fill.push_back(0);
        continue;
      }
      fitted_.shift.push_back(o_.normalize == Normalize::kMinmax ? m.low : m.mean);
      double spread =
          o_.normalize == Normalize::kMinmax ? m.high - m.low : std::sqrt(m.m2 / m.count);
      // A constant feature: scikit-learn's scalers divide by 1 then, not by 0.
      fitted_.scale.push_back(o_.normalize == Normalize::kNone || spread == 0 ? 1.0 : spread);
      fitted_.fill.push_back(fill_of(m));
    }
    if (o_.normalize == Normalize::kNone)
      std::fill(fitted_.shift.begin(), fitted_.shift.end(), 0.0);
  }

  Json fitted() const override {
    if (fitted_.shift.empty()) return nullptr;
    return {{"shift", fitted_.shift}, {"scale", fitted_.scale}, {"fill", fitted_.fill}};
  }

  void restore(const Json& fitted, const std::string& path) override {
    if (!learns()) return;
    auto numbers = [&](const char* key) { return fitted_numbers(fitted, key, path, o_.shape); };
    fitted_ = Fitted{numbers("shift"), numbers("scale"), numbers("fill")};
    // A standard deviation or a range (or 1): positive; a column divides by it.
    for (double scale : fitted_.scale)
      if (!std::isfinite(scale) || !(scale > 0))
        throw ConfigError(path, "",
                          "\"scale\" holds " + std::to_string(scale) +
                              "; a column divides by it, and it is a spread: positive");
  }

  // Statistics fitted from nothing are a shift of 0, a scale of 1 and a fill of 0 (fit()).
  std::string contradicted_kind(const std::string&, io::Feature::Kind kind) const override {
    if (kind != io::Feature::Kind::kNone || fitted_.shift.empty()) return "";
    for (size_t i = 0; i < fitted_.shift.size(); ++i)
      if (fitted_.shift[i] != 0 || fitted_.scale[i] != 1 || fitted_.fill[i] != 0)
        return "its statistics were fitted from the training records' values";
    return "";
  }

  // Clip, then log: the value the statistics and the normalization see.
  double prepared(double x, const io::RecordLocation& where) const {
    if (!o_.clip.empty()) x = std::clamp(x, o_.clip[0], o_.clip[1]);
    if (!o_.log) return x;
    if (!(x > -1))
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\": log(1 + x) of " + std::to_string(x) +
                          " is not defined; clip it first (clip: [0, ...])");
    return std::log1p(x);
  }

  // The feature's raw values, or none when the record lacks it.
  std::vector<double> raw_values(const io::Features& example,
                                 const io::RecordLocation& where) const {
    const io::Feature* feature = find_feature(example, feature_);
    if (!feature) return {};
    if (feature->kind == io::Feature::Kind::kBytes)
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\" holds the string \"" +
                          feature->bytes[0].substr(0, 40) +
                          "\"; a numeric column reads numbers: make it a categorical column");
    std::vector<double> values(feature->floats.begin(), feature->floats.end());
    for (int64_t v : feature->ints) values.push_back(double(v));
    if (static_cast<int64_t>(values.size()) != o_.shape)
      throw DataError(where.file, where.record, where.offset,
                      "feature \"" + feature_ + "\" has " + std::to_string(values.size()) +
                          " values; the column's shape is " + std::to_string(o_.shape));
    // Infinity (or 1e39, which becomes it as a float32) and NaN would train or answer NaN.
    for (double x : values)
      if (!std::isfinite(x))
        throw DataError(where.file, where.record, where.offset,
                        fmt::format("feature \"{}\" holds {}; a numeric column takes finite "
                                    "float32 numbers",
                                    feature_, x));
    return values;
  }

  void write(const io::Features& example, const io::RecordLocation& where,
             float* out) const override {
    std::vector<double> values = raw_values(example, where);
    if (values.empty()) values = missing_values(example, where);
    for (int64_t i = 0; i < o_.shape; ++i) {
      double x = prepared(values[size_t(i)], where);
      if (!fitted_.shift.empty()) x = (x - fitted_.shift[size_t(i)]) / fitted_.scale[size_t(i)];
      out[i] = static_cast<float>(x);
      if (!std::isfinite(out[i]))
        throw DataError(where.file, where.record, where.offset,
                        fmt::format("feature \"{}\": {} normalizes to {}, beyond float32", feature_,
                                    values[size_t(i)], x));
    }
  }

 private:
  struct Fitted {
    std::vector<double> shift, scale, fill;
  };

  // Whether the training split decides anything: a mean and spread, or the fill of a missing value.
  bool learns() const { return o_.normalize != Normalize::kNone || fills_from_data(); }

 public:
  bool fills_from_data() const {
    return o_.missing == Missing::kMean || o_.missing == Missing::kMedian ||
           o_.missing == Missing::kMode;
  }
  bool needs_raw_values() const {
    return o_.missing == Missing::kMedian || o_.missing == Missing::kMode;
  }

 private:
  // What fills a gap of one element, from its training values.
  double fill_of(Moments& m) const {
    if (!needs_raw_values()) return m.raw_sum / m.count;
    std::sort(m.raws.begin(), m.raws.end());
    return o_.missing == Missing::kMedian ? linear_quantile(m.raws, 0.5) : most_frequent(m.raws);
  }

  std::vector<double> missing_values(const io::Features& example,
                                     const io::RecordLocation& where) const {
    if (o_.missing == Missing::kValue) return std::vector<double>(size_t(o_.shape), o_.value);
    if (fills_from_data()) return fitted_.fill;
    std::string present;
    for (const auto& [name, feature] : example) present += (present.empty() ? "" : ", ") + name;
    throw DataError(where.file, where.record, where.offset,
                    "feature \"" + feature_ + "\" is missing (the record has: " + present +
                        "); give the column missing: mean, median, mode or value");
  }

  NumericOptions o_;
  std::string feature_;
  Fitted fitted_;
};

NumericStatistics::NumericStatistics(const NumericColumn& column)
    : elements(size_t(column.width())), column_(column) {
  for (Moments& element : elements) element.keeps_raw = column.needs_raw_values();
}

void NumericStatistics::add(const io::Features& example, const io::RecordLocation& where) {
  std::vector<double> values = column_.raw_values(example, where);
  for (size_t i = 0; i < values.size(); ++i)
    elements[i].add(values[i], column_.prepared(values[i], where));
}

}  // namespace

KILN_REGISTER(column_registry, "numeric", NumericColumn, NumericOptions,
              "Numbers as they are, or normalized (zscore, minmax), clipped and log-scaled.");

}  // namespace kiln::tabular
