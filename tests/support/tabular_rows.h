#pragma once
// Records of features held in memory, as a TabularSource: the training split of the tabular
// tests. Row r sits at record r of "rows.tfrecord", byte offset 16 r.

#include <string>
#include <vector>

#include "kiln/tabular/feature_columns.h"

namespace kiln::testing {

class TabularRows : public tabular::TabularSource {
 public:
  explicit TabularRows(std::vector<io::Features> rows) : rows_(std::move(rows)) {}
  int64_t rows() const override { return int64_t(rows_.size()); }
  void visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const override {
    for (int64_t r = begin; r < end; ++r) visit(r, rows_[size_t(r)], {"rows.tfrecord", r, 16 * r});
  }
  const io::Features& operator[](size_t r) const { return rows_[r]; }

 private:
  std::vector<io::Features> rows_;
};

/// `data.columns` as a config gives them (`{name: spec, ...}`).
inline ComponentMap declared_columns(const Json& specs) {
  ComponentMap map("column");
  OptionTraits<ComponentMap>::read(specs, map, ReadContext{"data.columns", nullptr});
  return map;
}

/// The columns `specs` declares, over `input`, fitted on `rows` on `threads` threads.
inline tabular::FeatureColumns fitted_columns(const Json& specs, std::vector<std::string> input,
                                              const TabularRows& rows, int64_t threads = 1) {
  tabular::FeatureColumns made(declared_columns(specs), input, "data.train.input", "data.columns");
  made.fit(rows, threads);
  return made;
}

/// The input row the columns write for `features` (from record 7 of "x.tfrecord").
inline std::vector<float> row_written(const tabular::FeatureColumns& columns,
                                      const io::Features& features) {
  std::vector<float> row(size_t(columns.width()), -99.0f);
  columns.write(features, {"x.tfrecord", 7, 70}, row.data());
  return row;
}

}  // namespace kiln::testing
