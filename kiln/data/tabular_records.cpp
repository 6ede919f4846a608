#include "kiln/data/tabular_records.h"

#include "kiln/core/error.h"

namespace kiln::data {

TabularRecords::TabularRecords(io::RecordStore records, FeatureDecoder targets,
                               TabularRecordNames names)
    : records_(std::move(records)), targets_(std::move(targets)), names_(std::move(names)) {}

Batch TabularRecords::gather(const torch::Tensor&) const {
  throw InternalError("tabular records are read through their feature columns (ColumnsDataset)");
}

ExampleOrigin TabularRecords::locate(int64_t index) const {
  return {records_.location(index), names_.target};
}

Batch TabularRecords::gather_records(const torch::Tensor& indices,
                                     const tabular::RowVisitor& input) const {
  auto index = indices.accessor<int64_t, 1>();
  auto rows = targets_.allocate(indices.size(0));
  io::Example example;
  for (int64_t i = 0; i < indices.size(0); ++i) {
    io::RecordLocation where = records_.location(index[i]);
    io::parse_example_into(records_.bytes(index[i]), example, where);
    names_.derived.apply(example.features, where);
    targets_.decode(example, where, i, rows);
    input(i, example.features, where);
  }
  Batch batch{torch::Tensor(), rows.at(names_.target), {}, {}};
  for (const std::string& name : names_.targets) batch.targets[name] = rows.at(name);
  return batch;
}

void TabularRecords::visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const {
  io::Example example;  // reused: a pass allocates little per record
  for (int64_t r = begin; r < end; ++r) {
    io::RecordLocation where = records_.location(r);
    io::parse_example_into(records_.bytes(r), example, where);
    names_.derived.apply(example.features, where);
    visit(r, example.features, where);
  }
}

}  // namespace kiln::data
