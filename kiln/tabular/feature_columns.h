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

#include "kiln/tabular/feature_column.h"

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

class FeatureColumns {
 public:
  /// `input` names the columns in order: each one of `declared` (`data.columns`) or, when none is
  /// declared under its name, a feature read as a plain `numeric` column. `input_path` is where
  /// `input` was given; `declared_path` where the columns were. A declared column that `input`
  /// does not list is a ConfigError.
  FeatureColumns(const ComponentMap& declared, const std::vector<std::string>& input,
                 const std::string& input_path, const std::string& declared_path);
  /// Built from a preprocessing.json alone (what an export ships), fitted as it says.
  static std::unique_ptr<FeatureColumns> from_preprocessing(const Json& preprocessing);

  /// Whether any column learns from the training split.
  bool needs_fitting() const;
  /// Gathers what the columns need from every row of `train`, in parts of a fixed number of rows
  /// on up to `threads` threads (merged in order, so the result does not depend on the threads),
  /// and fits them.
  void fit(const TabularSource& train, int64_t threads);
  /// preprocessing.json: the input's names, each column's resolved spec, what it fitted, its width.
  Json preprocessing() const;
  /// Takes back what preprocessing() wrote for the same columns; a ConfigError when the columns
  /// differ from the config's (a resumed run whose data.columns changed).
  void restore(const Json& preprocessing);

  int64_t width() const { return width_; }
  const std::vector<std::string>& names() const { return names_; }
  /// Every feature the columns read.
  std::vector<std::string> features() const;
  /// Writes the input row of one record: width() numbers.
  void write(const io::Features& features, const io::RecordLocation& where, float* row) const;
  /// Values no vocabulary had, by column, since the columns were built.
  std::map<std::string, int64_t> unseen() const;

 private:
  FeatureColumns() = default;
  void add(const std::string& name, ComponentSpec spec);
  void measure();

  std::vector<std::string> names_;
  std::vector<ComponentSpec> specs_;
  std::vector<std::unique_ptr<FeatureColumn>> columns_;
  int64_t width_ = 0;
};

}  // namespace kiln::tabular
