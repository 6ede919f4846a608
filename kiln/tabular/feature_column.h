#pragma once
// Feature columns (`data.columns`): how the raw features of a record (a tf.Example, a CSV row)
// become numbers in a model's input row, as tf.feature_column and Keras preprocessing layers
// turn them: numbers normalized, values bucketized, categories looked up or hashed, features
// crossed. A column that needs the training data (means, quantiles, a vocabulary) is fitted once,
// from statistics gathered in one pass over the training split; what it fitted is stored in
// the run's preprocessing.json and restored from there (resume, eval, export, serving), so
// training and serving write the same inputs.
// Thread-safety: after fit() or restore(), write() is const and runs on any number of threads;
// a ColumnStatistics belongs to one thread until it is merged.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/registry.h"
#include "kiln/io/example.h"

namespace kiln::tabular {

/// A column's hash or out-of-vocabulary buckets, at most: each is a feature of every row (or an
/// embedding's row), and a hand-edited 10^9 in preprocessing.json had 4 GB allocated before the
/// file was refused.
constexpr int64_t kMaxBuckets = int64_t(1) << 24;

class FeatureColumn;

/// Values no vocabulary had, by column, as one reader of the columns (a dataset: a split) met
/// them; the columns' own totals count every reader's, and the splits sharing a model's columns
/// must count apart (a training count once grew with the validation carve's). Thread-safe.
class UnseenCounts {
 public:
  void add(const FeatureColumn* column);
  int64_t of(const FeatureColumn* column) const;

 private:
  mutable std::mutex mutex_;
  std::map<const FeatureColumn*, int64_t> counts_;
};

/// While it lives, what this thread's writes find in no vocabulary is also counted in `counts`
/// (the innermost of nested ones).
class CountUnseenIn {
 public:
  explicit CountUnseenIn(UnseenCounts& counts);
  ~CountUnseenIn();
  CountUnseenIn(const CountUnseenIn&) = delete;
  CountUnseenIn& operator=(const CountUnseenIn&) = delete;
  /// The counts of this thread's innermost scope; null outside any.
  static UnseenCounts* current();

 private:
  UnseenCounts* outer_;
};

/// What a column gathers from the training split, one accumulator per thread of the pass.
class ColumnStatistics {
 public:
  virtual ~ColumnStatistics() = default;
  virtual void add(const io::Features& example, const io::RecordLocation& where) = 0;
  /// Adds what `other` (made by the same column) gathered.
  virtual void merge(ColumnStatistics& other) = 0;
};

class FeatureColumn {
 public:
  virtual ~FeatureColumn() = default;
  /// The features the column reads.
  virtual std::vector<std::string> features() const = 0;
  /// How many numbers it writes per example (known once fitted or restored).
  virtual int64_t width() const = 0;
  /// Non-zero when it writes a category's index (one number) for a model to embed: how many
  /// indices there are (known once fitted or restored).
  virtual int64_t cardinality() const { return 0; }
  /// The width of the embedding its index asks for; 0 when it gave none.
  virtual int64_t embedding_dim() const { return 0; }
  /// A fresh accumulator for the fitting pass; none when the column needs no data.
  virtual std::unique_ptr<ColumnStatistics> statistics() const { return nullptr; }
  /// Fits from the merged statistics of the training split.
  virtual void fit(ColumnStatistics& /*statistics*/) {}
  /// What fit() learned, as stored in preprocessing.json (null for a column with nothing to fit).
  virtual Json fitted() const { return nullptr; }
  /// Takes back what fitted() returned; throws ConfigError at `path` when it does not fit.
  virtual void restore(const Json& /*fitted*/, const std::string& /*path*/) {}
  /// Writes width() numbers for one example into `out`; a value it cannot use is a DataError
  /// naming `where` and the feature.
  virtual void write(const io::Features& example, const io::RecordLocation& where,
                     float* out) const = 0;
  /// Why the column's fitted state says its raw feature `feature` held no values of `kind` in
  /// training ("" when it may have): a vocabulary fitted from numbers holds only their texts, and
  /// one fitted from any values says there were some (kind kNone: no record had one).
  virtual std::string contradicted_kind(const std::string& /*feature*/,
                                        io::Feature::Kind /*kind*/) const {
    return "";
  }
  /// Whether a crossed column may cross this column's values (categorical and bucketize do).
  virtual bool crossable() const { return false; }
  /// The values a cross combines for one example: the categories, or the bucket's number; none
  /// when the record lacks the feature. Only for a crossable() column.
  virtual std::vector<std::string> cross_values(const io::Features& example,
                                                const io::RecordLocation& where) const;
  /// Called once all columns are built, with a look-up of the others by name (null when there is
  /// none): a crossed column finds the columns it crosses. Throws ConfigError at `path`.
  virtual void link(const std::function<const FeatureColumn*(const std::string&)>& /*column*/,
                    const std::string& /*path*/) {}
  /// Examples whose category the vocabulary did not have (they went to an OOV bucket).
  int64_t unseen() const { return unseen_.load(); }
  /// What fit() let pass but a user should know (a feature with no value in any training
  /// record, fitted as such).
  const std::vector<std::string>& warnings() const { return warnings_; }

 protected:
  /// Counts a value no vocabulary had: in the column's total, and in the thread's CountUnseenIn.
  void count_unseen() const;
  void warn(std::string warning) { warnings_.push_back(std::move(warning)); }

 private:
  mutable std::atomic<int64_t> unseen_{0};
  std::vector<std::string> warnings_;
};

/// Columns are built from their spec and their name (the feature they read by default).
using ColumnRegistry = Registry<FeatureColumn, const std::string&>;
ColumnRegistry& column_registry();

/// The feature of `example` called `name`, or null when the record lacks it or it holds no value
/// (TensorFlow's writers leave an empty cell so).
const io::Feature* find_feature(const io::Features& example, const std::string& name);

/// A feature's values as category strings: bytes as they are, integers in decimal (also whole
/// numbers in a float_list); a fraction is a DataError (bucketize it first).
std::vector<std::string> category_values(const io::Feature& feature, const std::string& name,
                                         const io::RecordLocation& where);

/// `fitted[key]` as restore() reads it from preprocessing.json: a list of numbers (of `count`,
/// when count >= 0) or of strings; anything else is a ConfigError at `path`.
std::vector<double> fitted_numbers(const Json& fitted, const char* key, const std::string& path,
                                   int64_t count = -1);
std::vector<std::string> fitted_strings(const Json& fitted, const char* key,
                                        const std::string& path);

/// The q-quantile of `sorted` (ascending, not empty), interpolated linearly between neighbours:
/// numpy.quantile's default, which the bucket edges and fills of median follow.
double linear_quantile(const std::vector<double>& sorted, double q);
/// The most frequent value of `sorted` (ascending, not empty); of several as frequent, the
/// smallest, as scipy.stats.mode takes it.
double most_frequent(const std::vector<double>& sorted);

/// The 64-bit FNV-1a hash of `text`'s bytes: what hash buckets, OOV buckets and crosses use.
/// Stable across machines and releases (docs/tabular.md).
uint64_t stable_hash(const std::string& text);

}  // namespace kiln::tabular
