#include "kiln/io/sharded_writer.h"

#include <fmt/format.h>

#include "kiln/core/error.h"

namespace kiln::io {

std::string shard_path(const std::string& prefix, int index, int count, Compression compression) {
  const char* suffix = compression == Compression::kGzip   ? ".gz"
                       : compression == Compression::kZlib ? ".zz"
                                                           : "";
  return fmt::format("{}-{:05d}-of-{:05d}.tfrecord{}", prefix, index, count, suffix);
}

ShardedTfRecordWriter::ShardedTfRecordWriter(const std::string& prefix, int shards,
                                             Compression compression) {
  KILN_CHECK(shards >= 1, "the number of shards must be at least 1, got {}", shards);
  for (int i = 0; i < shards; ++i) {
    paths_.push_back(shard_path(prefix, i, shards, compression));
    writers_.push_back(std::make_unique<TfRecordWriter>(paths_.back(), compression));
  }
}

void ShardedTfRecordWriter::write(std::string_view record) {
  writers_[static_cast<size_t>(records_ % static_cast<int64_t>(writers_.size()))]->write(record);
  records_ += 1;
}

void ShardedTfRecordWriter::close() {
  for (auto& writer : writers_) writer->close();
}

int64_t ShardedTfRecordWriter::bytes() const {
  int64_t total = 0;
  for (const auto& writer : writers_) total += writer->bytes();
  return total;
}

}  // namespace kiln::io
