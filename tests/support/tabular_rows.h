#pragma once
// Records of features held in memory, as a TabularSource: the training split of the tabular
// tests. Row r sits at record r of "rows.tfrecord", byte offset 16 r.

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

}  // namespace kiln::testing
