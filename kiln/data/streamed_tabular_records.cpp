#include "kiln/data/streamed_tabular_records.h"

#include "kiln/core/error.h"

namespace kiln::data {

StreamedTabularRecords::StreamedTabularRecords(io::RecordCatalog catalog, FeatureDecoder targets,
                                               TabularRecordNames names, StreamOptions stream)
    : catalog_(std::make_shared<io::RecordCatalog>(std::move(catalog))),
      targets_(std::move(targets)),
      names_(std::move(names)),
      stream_(stream) {}

int64_t StreamedTabularRecords::examples_per_epoch(int64_t world) const {
  return catalog_->records_per_rank(world);
}

int64_t StreamedTabularRecords::examples_of_rank(int64_t rank, int64_t world) const {
  return catalog_->records_for(rank, world);
}

std::unique_ptr<io::RecordStream> StreamedTabularRecords::open(io::EpochPlan plan) const {
  plan.buffer = stream_.shuffle_buffer;
  plan.cycle_length = stream_.cycle_length;
  return std::make_unique<io::RecordStream>(catalog_, plan);
}

Batch StreamedTabularRecords::decode(const std::vector<io::Record>&) const {
  throw InternalError("tabular records are read through their feature columns (ColumnsDataset)");
}

Batch StreamedTabularRecords::gather_records(const torch::Tensor&,
                                             const tabular::RowVisitor&) const {
  throw InternalError("streamed tabular records have no random access; the loader streams them");
}

Batch StreamedTabularRecords::decode_records(const std::vector<io::Record>& records,
                                             const tabular::RowVisitor& input) const {
  auto count = static_cast<int64_t>(records.size());
  auto rows = targets_.allocate(count);
  io::Example example;
  std::vector<io::RecordLocation> where;
  for (int64_t i = 0; i < count; ++i) {
    const io::Record& record = records[static_cast<size_t>(i)];
    io::parse_example_into(record.bytes, example, record.where);
    names_.derived.apply(example.features, record.where);
    targets_.decode(example, record.where, i, rows);
    input(i, example.features, record.where);
    where.push_back(record.where);
  }
  Batch batch{torch::Tensor(), rows.at(names_.target), {}, {}};
  for (const std::string& name : names_.targets) batch.targets[name] = rows.at(name);
  batch.origin = [where = std::move(where), target = names_.target](int64_t row) {
    return ExampleOrigin{where.at(static_cast<size_t>(row)), target};
  };
  return batch;
}

std::vector<io::Record> StreamedTabularRecords::take_in_order(int64_t begin, int64_t end) const {
  std::unique_lock<std::mutex> lock(mutex_);
  if (begin == 0) {  // a new pass, from the first record of the first file
    io::EpochPlan plan;
    plan.shuffle = false;
    plan.buffer = 1;
    plan.cycle_length = 1;
    plan.count = catalog_->size();
    reader_ = std::make_unique<io::RecordStream>(catalog_, plan);
    position_ = 0;
    failed_ = nullptr;
    turn_.notify_all();
  }
  turn_.wait(lock, [&] { return position_ == begin || failed_; });
  if (failed_) std::rethrow_exception(failed_);
  std::vector<io::Record> records;
  try {
    for (int64_t r = begin; r < end; ++r) {
      std::optional<io::Record> record = reader_->next();
      if (!record) throw InternalError("the files hold fewer records than their scan counted");
      records.push_back(std::move(*record));
    }
  } catch (...) {
    failed_ = std::current_exception();
    turn_.notify_all();
    throw;
  }
  position_ = end;
  turn_.notify_all();
  return records;
}

void StreamedTabularRecords::visit(int64_t begin, int64_t end,
                                   const tabular::RowVisitor& visit) const {
  std::vector<io::Record> records = take_in_order(begin, end);
  io::Example example;  // reused: a pass allocates little per record
  for (int64_t r = begin; r < end; ++r) {
    const io::Record& record = records[static_cast<size_t>(r - begin)];
    io::parse_example_into(record.bytes, example, record.where);
    names_.derived.apply(example.features, record.where);
    visit(r, example.features, record.where);
  }
}

}  // namespace kiln::data
