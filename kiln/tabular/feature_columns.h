#pragma once
// The feature columns of a model's input (`input: [a, b, ...]` with `data.columns`): built in the
// order `input` lists them, fitted together in one parallel pass over the training split, written
// to and read from preprocessing.json, and applied to one record at a time to fill its input row.
// Thread-safety: fit() and restore() on one thread; afterwards write() on any number.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/input_layout.h"
#include "kiln/tabular/derived_features.h"
#include "kiln/tabular/feature_column.h"
#include "kiln/tabular/raw_feature_types.h"

namespace kiln::tabular {

using RowVisitor =
    std::function<void(int64_t row, const io::Features& features, const io::RecordLocation& where)>;

/// Records of named features, read in order by row (a TFRecord file's tf.Examples, a CSV file's
/// rows).
class TabularSource {
 public:
  virtual ~TabularSource() = default;
  virtual int64_t rows() const = 0;
  /// Calls `visit` for the rows [begin, end), in order, on the calling thread.
  virtual void visit(int64_t begin, int64_t end, const RowVisitor& visit) const = 0;
};

/// The rows `rows` (in that order) of `source`: fitting on part of a split (the training part of
/// one that data.val_fraction carved, the rows on_corrupt: skip keeps).
class RowsOf : public TabularSource {
 public:
  RowsOf(const TabularSource& source, std::vector<int64_t> rows)
      : source_(source), rows_(std::move(rows)) {}
  int64_t rows() const override { return static_cast<int64_t>(rows_.size()); }
  void visit(int64_t begin, int64_t end, const RowVisitor& visit) const override;

 private:
  const TabularSource& source_;
  std::vector<int64_t> rows_;
};

/// Rows whose features a column refuses (a DataError: a string in a numeric column, a missing
/// feature with missing: fail, ...), as the source numbers them, in order: what on_corrupt: skip
/// drops.
struct RefusedRows {
  std::vector<int64_t> rows;
  std::string first_problem;
  void add(int64_t row, const std::string& problem);
  /// Appends `later`'s rows (all after these).
  void merge(const RefusedRows& later);
};

/// The columns of a model's input in row order, in groups: `inputs: {wide: [a], deep: [b, c]}`
/// makes two named parts of the row; `input: [a, b]` one group called "input" (`named` false).
struct InputGroups {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  bool named = false;

  InputGroups() = default;
  /// `input: [...]`: one unnamed group of `columns`.
  InputGroups(std::vector<std::string> columns);
  InputGroups(std::initializer_list<std::string> columns)
      : InputGroups(std::vector<std::string>(columns)) {}
  bool empty() const { return groups.empty(); }
  /// Every column, in row order.
  std::vector<std::string> columns() const;
  /// {"wide": [...], "deep": [...]}; null when not named.
  Json json() const;
  bool operator==(const InputGroups& other) const {
    return groups == other.groups && named == other.named;
  }
  bool operator!=(const InputGroups& other) const { return !(*this == other); }
};

/// A dataset's columns: `inputs` (named parts) when given, else the list `input`; both given is
/// a ConfigError at `inputs`.
InputGroups input_groups(const std::vector<std::string>& input, const InputGroups& inputs);

class FeatureColumns {
 public:
  /// `input` names the columns in order: each one of `declared` (`data.columns`) or, when none is
  /// declared under its name, a feature read as a plain `numeric` column. `input_path` is where
  /// `input` was given; `declared_path` where the columns were. A declared column that `input`
  /// does not list is a ConfigError.
  /// `derived` (data.derived) is what the records' features were computed with before the
  /// columns see them; the columns keep it for preprocessing.json.
  FeatureColumns(const ComponentMap& declared, const InputGroups& input,
                 const std::string& input_path, const std::string& declared_path,
                 DerivedFeatures derived = {});
  /// Built from a preprocessing.json alone (what an export ships), fitted as it says.
  static std::unique_ptr<FeatureColumns> from_preprocessing(const Json& preprocessing);

  /// Whether any column learns from the training split.
  bool needs_fitting() const;
  /// Gathers what the columns need from every row of `train`, in parts of a fixed number of rows
  /// on up to `threads` threads (merged in order, so the result does not depend on the threads),
  /// and fits them. A row a column refuses is a DataError, or with `skip_refused` left out of
  /// the statistics (on_corrupt: skip).
  void fit(const TabularSource& train, int64_t threads, bool skip_refused = false);
  /// The rows of `source` that write() refuses, found on up to `threads` threads.
  RefusedRows refused(const TabularSource& source, int64_t threads) const;
  /// preprocessing.json: the input's names, each column's resolved spec, what it fitted, its
  /// width, the derived features ("derived") when there are any, and the raw features' kinds
  /// ("raw_features").
  Json preprocessing() const;
  /// Takes back what preprocessing() wrote for the same columns; a ConfigError when the columns
  /// or derived features differ from the config's (a resumed run whose data.columns changed).
  void restore(const Json& preprocessing);
  /// The derived features computed into each record before write() reads it (data.derived).
  const DerivedFeatures& derived() const { return derived_; }
  /// Those of them the columns read, directly or through others: what a reader of raw records
  /// (serving's examples) computes before write(); a derived label is not among them.
  const DerivedFeatures& derived_inputs() const { return derived_inputs_; }

  int64_t width() const { return width_; }
  const std::vector<std::string>& names() const { return names_; }
  const InputGroups& groups() const { return groups_; }
  /// Where each named group's columns and each index sit in the row (known once fitted or
  /// restored); `input: [...]` names no part.
  InputLayout layout() const;
  /// Every feature the columns read.
  std::vector<std::string> features() const;
  /// The features a raw record brings (what a served example or a predicted file holds): those
  /// the columns read that no derived feature makes, then those the derived features read.
  std::vector<std::string> raw_features() const;
  /// The kinds and counts of the raw features' values in the training records (known once
  /// fitted, or restored from a preprocessing.json that holds them; empty before).
  const RawFeatureTypes& raw_types() const { return raw_types_; }
  /// Writes the input row of one record: width() numbers.
  void write(const io::Features& features, const io::RecordLocation& where, float* row) const;
  /// Values no vocabulary had, by column, since the columns were built.
  std::map<std::string, int64_t> unseen() const;
  /// Those `counts` holds (one reader's: a split), by column.
  std::map<std::string, int64_t> unseen(const UnseenCounts& counts) const;
  /// What fit() found and let pass, each at the config path of its column: a feature no training
  /// record holds, or holds no value of (its column fitted as seeing none).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  FeatureColumns() = default;
  /// Refuses a preprocessing.json whose columns read a feature its "features" list lacks.
  void check_fitted_features(const Json& fitted) const;
  void check_raw_types() const;
  /// Refuses a column's "fitted" that holds more or else than the column restored from it.
  void check_fitted_reads_back(size_t c, const Json& fitted) const;
  /// Adds the column `spec` describes, built from `built_from` instead when given.
  void add(const std::string& name, ComponentSpec spec, const Json& built_from = nullptr);
  /// Lets each column find the others it reads (a cross, the columns it crosses).
  void link();
  /// A warning for each of `wanted` that no record holds, at the column reading it.
  void check_present(const std::vector<std::string>& wanted, const std::vector<char>& present,
                     const std::vector<std::string>& first_names);
  void measure();
  /// fit() over `train`: with `refused`, rows a column's statistics refuse are added to it and
  /// the statistics gathered again without them.
  void fit_rows(const TabularSource& train, int64_t threads, RefusedRows* refused);

  InputGroups groups_;
  std::vector<std::string> names_;
  std::vector<ComponentSpec> specs_;
  std::vector<std::unique_ptr<FeatureColumn>> columns_;
  DerivedFeatures derived_;
  DerivedFeatures derived_inputs_;  // derived_.needed_for(features())
  RawFeatureTypes raw_types_;
  std::vector<std::string> warnings_;
  int64_t width_ = 0;
};

}  // namespace kiln::tabular

namespace kiln {

/// `inputs: {NAME: [columns...], ...}`: a mapping of part names to non-empty lists of columns.
template <>
struct OptionTraits<tabular::InputGroups> {
  static void read(const Json& value, tabular::InputGroups& out, const ReadContext& ctx);
  static Json write(const tabular::InputGroups& value) {
    return value.empty() ? Json::object() : value.json();
  }
  static std::string type_name(const tabular::InputGroups&) {
    return "mapping of names to lists of columns";
  }
};

}  // namespace kiln
