#pragma once
// TFRecord files read front to back every epoch, for datasets larger than memory: what tf.data
// does with list_files + interleave + shard + shuffle(buffer). A RecordCatalog scans the files
// once (record counts, damaged records to skip); each epoch a RecordStream then
//   - takes this rank's part: whole files (file i to rank i % world) when there are at least as
//     many files as ranks, else every world-th record;
//   - visits its files in a seeded order, `cycle_length` of them open at once, one record from
//     each in turn;
//   - passes the records through a shuffle buffer: a seeded pick among the next `buffer` ones;
//   - stops after `count` records, so that every rank delivers as many.
// Everything random derives from (seed, epoch): an epoch's stream is the same each time it is
// opened, so skipping the records already served resumes it exactly.
// Thread-safety: a catalog is immutable; a stream belongs to one thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kiln/io/record_store.h"
#include "kiln/io/tfrecord.h"

namespace kiln::io {

struct Record {
  std::string bytes;
  RecordLocation where;
};

class RecordCatalog {
 public:
  /// Scans every record once; damaged or rejected records are an error, or skipped (and left
  /// out of every epoch) with skip_corrupt.
  static RecordCatalog scan(const RecordStoreOptions& options,
                            const RecordStore::Check& check = {});

  int64_t size() const { return total_; }
  /// Damaged or rejected records the scan dropped, and the first one's error.
  int64_t skipped() const { return skipped_; }
  int64_t skipped_bytes() const { return skipped_bytes_; }
  const std::string& first_problem() const { return first_problem_; }
  /// Records rank `rank` of `world` would read in an epoch.
  int64_t records_for(int64_t rank, int64_t world) const;
  /// As many records as every rank has: the length of an epoch.
  int64_t records_per_rank(int64_t world) const;

 private:
  friend class RecordStream;
  RecordStoreOptions options_;
  std::vector<std::string> files_;
  std::vector<std::vector<int64_t>> kept_;  // per file, the indices of the records kept, ascending
  std::vector<int64_t> first_index_;        // per file, the stream-wide index of its first record
  int64_t total_ = 0;
  int64_t skipped_ = 0;
  int64_t skipped_bytes_ = 0;
  std::string first_problem_;
};

struct EpochPlan {
  uint64_t seed = 1;
  int64_t epoch = 0;
  bool shuffle = true;
  int64_t buffer = 1024;     // shuffle buffer size (1: no shuffling of records)
  int64_t cycle_length = 4;  // files open at once
  int64_t rank = 0, world = 1;
  int64_t count = 0;  // records to deliver
};

class RecordStream {
 public:
  RecordStream(std::shared_ptr<const RecordCatalog> catalog, const EpochPlan& plan);
  ~RecordStream();
  /// The next record of the epoch, or nothing once `count` were delivered.
  std::optional<Record> next();

 private:
  struct Slot;  // an open file
  std::optional<Record> next_interleaved();
  std::optional<Record> read_from(Slot& slot);
  bool open_next_file(Slot& slot);

  std::shared_ptr<const RecordCatalog> catalog_;
  EpochPlan plan_;
  bool by_file_;               // shard by file, else by record
  std::vector<size_t> files_;  // this rank's files, in this epoch's order
  size_t next_file_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;
  size_t turn_ = 0;
  std::vector<Record> buffer_;
  std::mt19937_64 engine_;
  int64_t delivered_ = 0;
};

}  // namespace kiln::io
