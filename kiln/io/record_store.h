#pragma once
// The records of a set of TFRecord files held in memory, back to back in one buffer, each with
// where it came from (file, record index, byte offset) so that a later decoding error can name
// it. This is the input pipeline's record cache: files are read once, records are decoded as
// batches are made.
// Thread-safety: immutable once read; bytes() and location() may be called from any thread.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/example.h"

namespace kiln::io {

struct RecordStoreOptions {
  std::vector<std::string> patterns;  // files or glob patterns, each expanded in sorted order
  std::string compression = "auto";   // auto (detected per file), none, gzip or zlib
  bool skip_corrupt = false;          // drop damaged records (counted) instead of failing
  int64_t limit = 0;                  // keep only the first N records (0 = all)
};

/// A record kept by scan_records: file index (into ScanSummary::files), record index, and the
/// byte offset of its payload.
struct ScannedRecord {
  size_t file;
  int64_t record, offset;
};

struct ScanSummary {
  std::vector<std::string> files;  // the expanded patterns
  int64_t skipped = 0;             // damaged or rejected records dropped
  int64_t skipped_bytes = 0;       // bytes of damaged frames, and of what was lost after them
  std::string first_problem;
};

class RecordStore {
 public:
  /// Called for each intact record before it is kept; a DataError it throws is handled as a
  /// damaged record (fail, or skip and count).
  using Check = std::function<void(std::string_view record, const RecordLocation& where)>;

  /// Reads every record; throws DataError on a damaged one unless skip_corrupt, and Error when no
  /// file matches a pattern or nothing usable is left. Reports skipped records on stderr.
  static RecordStore read(const RecordStoreOptions& options, const Check& check = {});

  int64_t size() const { return static_cast<int64_t>(origins_.size()); }
  std::string_view bytes(int64_t index) const;
  RecordLocation location(int64_t index) const;
  /// Damaged records dropped while reading, and the error of the first.
  int64_t skipped() const { return summary_.skipped; }
  int64_t skipped_bytes() const { return summary_.skipped_bytes; }
  const std::string& first_problem() const { return summary_.first_problem; }

 private:
  std::string data_;
  std::vector<size_t> ends_;  // record i is data_[ends_[i - 1], ends_[i])
  std::vector<ScannedRecord> origins_;
  ScanSummary summary_;
};

/// Reads the records the options name in file order, applying limit, skip policy and `check` as
/// RecordStore::read does, and hands each kept record to `keep`. Reports skipped records on
/// stderr; throws Error when nothing is kept.
ScanSummary scan_records(const RecordStoreOptions& options, const RecordStore::Check& check,
                         const std::function<void(const ScannedRecord&, std::string&)>& keep);

/// The files `patterns` name, each glob expanded in sorted order; Error naming a pattern that
/// matches nothing.
std::vector<std::string> expand_file_patterns(const std::vector<std::string>& patterns);

}  // namespace kiln::io
