#include "kiln/io/record_stream.h"

#include <algorithm>

#include "kiln/core/error.h"

namespace kiln::io {

RecordCatalog RecordCatalog::scan(const RecordStoreOptions& options,
                                  const RecordStore::Check& check) {
  RecordCatalog catalog;
  catalog.options_ = options;
  ScanSummary summary = scan_records(options, check, [&](const ScannedRecord& at, std::string&) {
    if (catalog.kept_.size() <= at.file) catalog.kept_.resize(at.file + 1);
    catalog.kept_[at.file].push_back(at.record);
  });
  catalog.files_ = summary.files;
  catalog.skipped_ = summary.skipped;
  catalog.skipped_bytes_ = summary.skipped_bytes;
  catalog.first_problem_ = summary.first_problem;
  catalog.kept_.resize(catalog.files_.size());
  for (const auto& kept : catalog.kept_) {
    catalog.first_index_.push_back(catalog.total_);
    catalog.total_ += static_cast<int64_t>(kept.size());
  }
  return catalog;
}

int64_t RecordCatalog::records_for(int64_t rank, int64_t world) const {
  if (static_cast<int64_t>(files_.size()) < world)
    return total_ / world + (rank < total_ % world ? 1 : 0);
  int64_t count = 0;
  for (size_t file = static_cast<size_t>(rank); file < files_.size();
       file += static_cast<size_t>(world))
    count += static_cast<int64_t>(kept_[file].size());
  return count;
}

int64_t RecordCatalog::records_per_rank(int64_t world) const {
  int64_t fewest = records_for(0, world);
  for (int64_t rank = 1; rank < world; ++rank) fewest = std::min(fewest, records_for(rank, world));
  return fewest;
}

struct RecordStream::Slot {
  size_t file = 0;
  std::unique_ptr<TfRecordReader> reader;
  size_t cursor = 0;  // the next entry of the catalog's kept list for this file
};

RecordStream::RecordStream(std::shared_ptr<const RecordCatalog> catalog, const EpochPlan& plan)
    : catalog_(std::move(catalog)), plan_(plan) {
  KILN_ASSERT(plan_.world >= 1 && plan_.rank >= 0 && plan_.rank < plan_.world);
  KILN_ASSERT(plan_.buffer >= 1 && plan_.cycle_length >= 1);
  std::seed_seq seeds{plan_.seed, static_cast<uint64_t>(plan_.epoch), uint64_t{0x5EED}};
  engine_.seed(seeds);
  size_t files = catalog_->files_.size();
  by_file_ = static_cast<int64_t>(files) >= plan_.world;
  for (size_t f = 0; f < files; ++f)
    if (!by_file_ || static_cast<int64_t>(f) % plan_.world == plan_.rank) files_.push_back(f);
  if (plan_.shuffle)
    for (size_t i = files_.size(); i > 1; --i) std::swap(files_[i - 1], files_[engine_() % i]);
  for (int64_t i = 0; i < plan_.cycle_length; ++i) {
    auto slot = std::make_unique<Slot>();
    if (!open_next_file(*slot)) break;
    slots_.push_back(std::move(slot));
  }
}

RecordStream::~RecordStream() = default;

bool RecordStream::open_next_file(Slot& slot) {
  if (next_file_ >= files_.size()) return false;
  slot.file = files_[next_file_++];
  slot.cursor = 0;
  std::optional<Compression> compression;
  if (catalog_->options_.compression != "auto")
    compression = parse_compression(catalog_->options_.compression);
  slot.reader = std::make_unique<TfRecordReader>(catalog_->files_[slot.file], compression);
  // Framed as the scan framed it, so that record indices agree with the catalog's.
  if (catalog_->options_.skip_corrupt) slot.reader->resynchronize_after_damage();
  return true;
}

std::optional<Record> RecordStream::read_from(Slot& slot) {
  const std::vector<int64_t>& kept = catalog_->kept_[slot.file];
  std::string bytes;
  while (slot.cursor < kept.size()) {
    try {
      if (!slot.reader->next(bytes)) return std::nullopt;
    } catch (const DataError&) {
      if (!catalog_->options_.skip_corrupt) throw;
      continue;  // the scan skipped it too
    }
    int64_t record = slot.reader->record_index() - 1;
    if (kept[slot.cursor] != record) continue;  // rejected by the scan's check
    int64_t index = catalog_->first_index_[slot.file] + static_cast<int64_t>(slot.cursor++);
    if (!by_file_ && index % plan_.world != plan_.rank) continue;
    return Record{std::move(bytes),
                  {catalog_->files_[slot.file], record, slot.reader->record_offset() + 12}};
  }
  return std::nullopt;  // the rest of the file lies beyond the catalog's limit
}

std::optional<Record> RecordStream::next_interleaved() {
  while (!slots_.empty()) {
    turn_ %= slots_.size();
    Slot& slot = *slots_[turn_];
    if (auto record = read_from(slot)) {
      turn_ += 1;
      return record;
    }
    if (!open_next_file(slot)) slots_.erase(slots_.begin() + static_cast<std::ptrdiff_t>(turn_));
  }
  return std::nullopt;
}

std::optional<Record> RecordStream::next() {
  if (delivered_ >= plan_.count) return std::nullopt;
  std::optional<Record> out;
  if (!plan_.shuffle || plan_.buffer == 1) {
    out = next_interleaved();
  } else {
    while (static_cast<int64_t>(buffer_.size()) < plan_.buffer) {
      auto record = next_interleaved();
      if (!record) break;
      buffer_.push_back(std::move(*record));
    }
    if (buffer_.empty()) return std::nullopt;
    size_t pick = engine_() % buffer_.size();
    out = std::move(buffer_[pick]);
    buffer_[pick] = std::move(buffer_.back());
    buffer_.pop_back();
  }
  if (out) delivered_ += 1;
  return out;
}

}  // namespace kiln::io
