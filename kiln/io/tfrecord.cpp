#include "kiln/io/tfrecord.h"

#include <cerrno>
#include <cstdio>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"
#include "kiln/io/stream_error.h"

namespace kiln::io {
namespace {

constexpr size_t kHeaderSize = 12, kFooterSize = 4;
// Records are read in pieces of at most this size, so a corrupt length that still passes its CRC
// cannot make the reader allocate more than the file holds.
constexpr size_t kReadPiece = size_t{1} << 20;

uint64_t load_le(const char* bytes, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

void store_le(char* out, uint64_t value, int count) {
  for (int i = 0; i < count; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint32_t masked_crc(const char* data, size_t size) { return crc32c_mask(crc32c(data, size)); }

}  // namespace

std::string frame_tfrecord(std::string_view data) {
  std::string framed(kHeaderSize + data.size() + kFooterSize, '\0');
  store_le(&framed[0], data.size(), 8);
  store_le(&framed[8], masked_crc(framed.data(), 8), 4);
  framed.replace(kHeaderSize, data.size(), data.data(), data.size());
  store_le(&framed[kHeaderSize + data.size()], masked_crc(data.data(), data.size()), 4);
  return framed;
}

TfRecordReader::TfRecordReader(std::string path, std::optional<Compression> compression)
    : path_(std::move(path)),
      compression_(compression ? *compression : detect_file_compression(path_)),
      input_(open_input(path_, compression_)) {}

int64_t TfRecordReader::position() const {
  return input_->position() - static_cast<int64_t>(pending_.size() - pending_used_);
}

size_t TfRecordReader::read_up_to(std::string& out, size_t size) {
  size_t ahead = std::min(size, pending_.size() - pending_used_);
  out.assign(pending_, pending_used_, ahead);
  pending_used_ += ahead;
  if (pending_used_ == pending_.size()) pending_.clear(), pending_used_ = 0;
  while (out.size() < size) {
    size_t piece = std::min(kReadPiece, size - out.size()), before = out.size();
    out.resize(before + piece);
    size_t got = input_->read(&out[before], piece);
    out.resize(before + got);
    if (got < piece) break;
  }
  return out.size();
}

void TfRecordReader::fail(const std::string& problem, bool recoverable) {
  int64_t record = index_, offset = offset_;
  index_ += 1;
  offset_ = position();
  damaged_bytes_ += offset_ - offset;
  broken_ = !recoverable;
  throw DataError(path_, record, offset, problem);
}

// A frame whose length cannot be trusted: the rest of the file cannot be framed from here, unless
// resynchronizing finds the next intact record.
void TfRecordReader::fail_frame(const std::string& problem, const std::string& header) {
  if (!resynchronize_) {
    fail(problem + " (the rest of the file cannot be framed)", false);
  }
  std::string window;
  read_up_to(window, kReadPiece);
  pending_ = find_next_frame(header + window);
  pending_used_ = 0;
  int64_t skipped = position() - offset_;
  if (pending_.empty())
    fail(fmt::format("{}; no intact record follows: the last {} bytes of the file are lost",
                     problem, skipped),
         false);
  fail(fmt::format("{}; {} bytes passed over to the next intact record", problem, skipped), true);
}

// Tops `window` up from the input until it holds `size` bytes from `start`; false at the end.
bool TfRecordReader::fill(std::string& window, size_t start, size_t size) {
  while (window.size() - start < size) {
    std::string more;
    if (read_up_to(more, std::max(kReadPiece, size - (window.size() - start))) == 0) return false;
    window += more;
  }
  return true;
}

// Scans `window` (a damaged frame's header and what follows it, then the rest of the input) from
// its second byte for the first offset where a whole record frames with both CRCs intact; returns
// the bytes from there, or nothing when none does.
std::string TfRecordReader::find_next_frame(std::string window) {
  size_t start = 1;
  while (fill(window, start, kHeaderSize)) {
    const char* header = window.data() + start;
    uint64_t length = load_le(header, 8);
    if (masked_crc(header, 8) == static_cast<uint32_t>(load_le(header + 8, 4)) &&
        length <= kMaxTfRecordBytes && fill(window, start, kHeaderSize + length + kFooterSize)) {
      const char* data = window.data() + start + kHeaderSize;
      if (masked_crc(data, length) == static_cast<uint32_t>(load_le(data + length, 4)))
        return window.substr(start);
    }
    start += 1;
    if (start > kReadPiece) window.erase(0, start), start = 0;  // keep the window bounded
  }
  return {};
}

bool TfRecordReader::next(std::string& record) {
  if (broken_) return false;
  try {
    return read_record(record);
  } catch (const CompressedStreamError& e) {
    // Nothing after this point can be inflated: the rest of the file is lost.
    int64_t record_index = index_;
    broken_ = true;
    index_ += 1;
    throw DataError(path_, record_index, e.offset(),
                    e.problem() + "; reading of the file stops here");
  }
}

bool TfRecordReader::read_record(std::string& record) {
  std::string header;
  size_t got = read_up_to(header, kHeaderSize);
  if (got == 0) return false;
  if (got < kHeaderSize)
    fail(fmt::format("truncated record: the file ends {} bytes into its 12-byte header", got),
         false);
  uint64_t length = load_le(header.data(), 8);
  if (masked_crc(header.data(), 8) != static_cast<uint32_t>(load_le(header.data() + 8, 4)))
    fail_frame("length CRC mismatch: not a TFRecord file, or corrupt", header);
  if (length > kMaxTfRecordBytes)
    fail_frame(fmt::format("the length field says {} bytes, more than a record may hold ({})",
                           length, kMaxTfRecordBytes),
               header);
  std::string body;
  size_t wanted = static_cast<size_t>(length) + kFooterSize;
  if (read_up_to(body, wanted) < wanted)
    fail(fmt::format("truncated record: {} data bytes expected, the file ends after {}", length,
                     std::min<size_t>(body.size(), length)),
         false);
  if (masked_crc(body.data(), length) != static_cast<uint32_t>(load_le(body.data() + length, 4)))
    fail(fmt::format("data CRC mismatch in a record of {} bytes", length), true);
  body.resize(length);
  record = std::move(body);
  record_offset_ = offset_;
  index_ += 1;
  offset_ = position();
  return true;
}

TfRecordWriter::TfRecordWriter(std::string path, Compression compression)
    : path_(std::move(path)),
      partial_path_(path_ + ".partial"),
      output_(open_output(partial_path_, compression)) {}

TfRecordWriter::~TfRecordWriter() {
  if (!output_) return;
  output_.reset();
  std::remove(partial_path_.c_str());
}

void TfRecordWriter::write(std::string_view record) {
  KILN_ASSERT(output_ != nullptr);
  std::string framed = frame_tfrecord(record);
  output_->write(framed.data(), framed.size());
  records_ += 1;
  bytes_ += static_cast<int64_t>(framed.size());
}

void TfRecordWriter::close() {
  if (!output_) return;
  output_->close();
  output_.reset();
  if (std::rename(partial_path_.c_str(), path_.c_str()) != 0) throw IoError("rename", path_, errno);
}

}  // namespace kiln::io
