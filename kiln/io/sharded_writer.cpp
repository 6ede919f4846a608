#include "kiln/io/sharded_writer.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include "kiln/core/error.h"

namespace kiln::io {

std::string shard_path(const std::string& prefix, int index, int count, Compression compression) {
  const char* suffix = compression == Compression::kGzip   ? ".gz"
                       : compression == Compression::kZlib ? ".zz"
                                                           : "";
  return fmt::format("{}-{:05d}-of-{:05d}.tfrecord{}", prefix, index, count, suffix);
}

namespace {

// Every shard stays open while records are dealt out: refuse a count the process may not open
// before writing anything, instead of failing half-way on "Too many open files".
void check_open_file_limit(int shards) {
  constexpr rlim_t kHeadroom = 32;  // stdin/out/err, the input, libraries
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  if (static_cast<rlim_t>(shards) + kHeadroom <= limit.rlim_cur) return;
  throw UsageError(fmt::format(
      "{} shards would be open at once, but this process may open {} files (ulimit -n); write at "
      "most {} shards, or raise the limit",
      shards, limit.rlim_cur, limit.rlim_cur > kHeadroom ? limit.rlim_cur - kHeadroom : 0));
}

}  // namespace

ShardedTfRecordWriter::ShardedTfRecordWriter(const std::string& prefix, int shards,
                                             Compression compression) {
  KILN_CHECK(shards >= 1, "the number of shards must be at least 1, got {}", shards);
  check_open_file_limit(shards);
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
