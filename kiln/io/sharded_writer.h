#pragma once
// Writes records into N TFRecord shards named as TensorFlow names them,
// `<prefix>-00000-of-00004.tfrecord[.gz]`, dealing records round-robin so shards differ in size
// by at most one record and each holds an even mix of the input. Every shard appears under its
// final name only when close() succeeds (see TfRecordWriter).
// Thread-safety: one thread.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/io/tfrecord.h"

namespace kiln::io {

class ShardedTfRecordWriter {
 public:
  ShardedTfRecordWriter(const std::string& prefix, int shards, Compression compression);

  void write(std::string_view record);
  /// Closes every shard; throws IoError.
  void close();

  /// The shard file names, in order.
  const std::vector<std::string>& paths() const { return paths_; }
  int64_t records() const { return records_; }
  /// Uncompressed bytes written, framing included.
  int64_t bytes() const;

 private:
  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<TfRecordWriter>> writers_;
  int64_t records_ = 0;
};

/// `<prefix>-<index>-of-<count>.tfrecord`, plus `.gz` or `.zz` when compressed.
std::string shard_path(const std::string& prefix, int index, int count, Compression compression);

}  // namespace kiln::io
