#pragma once
// TFRecord files (docs/formats.md §1.1): records framed as a little-endian uint64 length, the
// masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data; the whole stream
// may be gzip or zlib compressed. TensorFlow, TensorBoard and kiln's converters all speak it.
// Thread-safety: one thread per reader or writer.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/io/byte_stream.h"

namespace kiln::io {

/// The longest record read (2 GiB, protobuf's limit for a message): a larger length field is
/// taken as damage, so that no corrupt length makes the reader wait for, or allocate, more.
constexpr uint64_t kMaxTfRecordBytes = uint64_t{1} << 31;

/// The bytes of one framed record: header, data, footer.
std::string frame_tfrecord(std::string_view data);

/// Reads the records of one file in order, checking both CRCs of every record.
class TfRecordReader {
 public:
  /// Opens `path`; detects the compression from the file when none is given. Throws IoError.
  explicit TfRecordReader(std::string path, std::optional<Compression> compression = {});

  /// Reads the next record into `record`; false at the clean end of the file. Throws DataError
  /// naming the file, the record index and the byte offset where the record starts (in the
  /// uncompressed stream) for a CRC mismatch, a truncated record, a length over
  /// kMaxTfRecordBytes or a corrupt compressed stream. After a data-CRC mismatch the reader stands
  /// at the following record, so a caller may skip the bad one. After a damaged frame (its length
  /// cannot be trusted) the framing is lost: the reader reports the end, unless it resynchronizes.
  bool next(std::string& record);

  /// After a damaged frame, look for the next intact record (a length whose CRC matches followed
  /// by data whose CRC matches) instead of giving up on the rest of the file, and say in the
  /// error how many bytes were passed over. For readers that skip damaged records.
  void resynchronize_after_damage() { resynchronize_ = true; }
  /// Bytes of damaged records passed over so far, and of the rest of the file when the framing
  /// was lost for good.
  int64_t damaged_bytes() const { return damaged_bytes_; }

  const std::string& path() const { return path_; }
  Compression compression() const { return compression_; }
  /// Index of the next record (= records read so far, bad ones included).
  int64_t record_index() const { return index_; }
  /// Byte offset of the next record in the uncompressed stream.
  int64_t offset() const { return offset_; }
  /// Byte offset where the record last returned by next() starts (its 12-byte header).
  int64_t record_offset() const { return record_offset_; }

 private:
  bool read_record(std::string& record);
  [[noreturn]] void fail(const std::string& problem, bool recoverable);
  [[noreturn]] void fail_frame(const std::string& problem, const std::string& header);
  size_t read_up_to(std::string& out, size_t size);
  bool fill(std::string& window, size_t start, size_t size);
  std::string find_next_frame(std::string window);
  int64_t position() const;

  std::string path_;
  Compression compression_;
  std::unique_ptr<InputStream> input_;
  std::string pending_;  // bytes read ahead while resynchronizing, delivered before input_'s
  size_t pending_used_ = 0;
  int64_t index_ = 0, offset_ = 0, record_offset_ = 0, damaged_bytes_ = 0;
  bool broken_ = false, resynchronize_ = false;
};

/// Writes records to `path`, first under `path.partial`, renamed into place by close(): a file
/// with the final name is always complete. Destroyed without close(), it removes the partial file.
class TfRecordWriter {
 public:
  explicit TfRecordWriter(std::string path, Compression compression = Compression::kNone);
  ~TfRecordWriter();
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  void write(std::string_view record);
  /// Finishes the stream and renames the file into place; throws IoError.
  void close();

  int64_t records() const { return records_; }
  /// Uncompressed bytes written, framing included.
  int64_t bytes() const { return bytes_; }

 private:
  std::string path_, partial_path_;
  std::unique_ptr<OutputStream> output_;
  int64_t records_ = 0, bytes_ = 0;
};

}  // namespace kiln::io
