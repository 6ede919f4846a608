#include "kiln/io/byte_stream.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <vector>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"
#include "kiln/core/regular_file.h"
#include "kiln/io/stream_error.h"

namespace kiln::io {
namespace {

constexpr size_t kChunk = 1 << 16;

// zlib's window bits: 16 + 15 selects the gzip wrapper, plain 15 the zlib one.
int window_bits(Compression compression) {
  return compression == Compression::kGzip ? 16 + MAX_WBITS : MAX_WBITS;
}

struct FileCloser {
  void operator()(std::FILE* file) const {
    if (file) std::fclose(file);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_file_for_writing(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "wb"));
  if (!file) throw IoError("create", path, errno);
  return file;
}

// A regular file only (core/regular_file.h): a FIFO waited for a writer forever.
FilePtr open_file_for_reading(const std::string& path) {
  int fd = open_regular_file(path);
  FilePtr file(::fdopen(fd, "rb"));
  if (!file) {
    int error = errno;
    ::close(fd);
    throw IoError("open", path, error);
  }
  return file;
}

size_t read_raw(std::FILE* file, const std::string& path, char* out, size_t size) {
  size_t got = std::fread(out, 1, size, file);
  if (got < size && std::ferror(file)) throw IoError("read", path, errno);
  return got;
}

class FileInput : public InputStream {
 public:
  explicit FileInput(const std::string& path) : path_(path), file_(open_file_for_reading(path)) {}
  size_t read(char* out, size_t size) override {
    size_t got = read_raw(file_.get(), path_, out, size);
    position_ += static_cast<int64_t>(got);
    return got;
  }
  int64_t position() const override { return position_; }

 private:
  std::string path_;
  FilePtr file_;
  int64_t position_ = 0;
};

// Inflates gzip (several concatenated members allowed, as gzip itself does) or zlib streams.
class InflateInput : public InputStream {
 public:
  InflateInput(const std::string& path, Compression compression)
      : path_(path), file_(open_file_for_reading(path)), input_(kChunk) {
    if (inflateInit2(&stream_, window_bits(compression)) != Z_OK)
      throw InternalError("zlib inflateInit2 failed");
  }
  ~InflateInput() override { inflateEnd(&stream_); }

  size_t read(char* out, size_t size) override {
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = requested_ = static_cast<uInt>(size);
    while (stream_.avail_out > 0 && !finished_) inflate_some();
    size_t got = size - stream_.avail_out;
    position_ += static_cast<int64_t>(got);
    return got;
  }
  int64_t position() const override { return position_; }

 private:
  void refill() {
    size_t got = read_raw(file_.get(), path_, input_.data(), input_.size());
    stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
    stream_.avail_in = static_cast<uInt>(got);
    file_read_ += static_cast<int64_t>(got);
    file_ended_ = got == 0;
  }

  void inflate_some() {
    if (stream_.avail_in == 0) refill();
    if (stream_.avail_in == 0 && file_ended_) {
      if (in_member_) fail_member("the compressed stream ends before its end marker");
      finished_ = true;
      return;
    }
    if (!in_member_) member_start_ = compressed_offset(), member_output_ = produced();
    in_member_ = true;
    int status = inflate(&stream_, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      in_member_ = false;
      members_ += 1;
      inflateReset(&stream_);  // a following gzip member, if any, starts here
    } else if (status != Z_OK && status != Z_BUF_ERROR) {
      fail_member(std::string("corrupt compressed stream: ") +
                  (stream_.msg ? stream_.msg : "bad data"));
    }
  }

  // Bytes delivered so far, those of the read() under way included.
  int64_t produced() const { return position_ + (requested_ - stream_.avail_out); }

  int64_t compressed_offset() const { return file_read_ - static_cast<int64_t>(stream_.avail_in); }

  // Bytes after a complete stream that do not start another one are stray, not a cut stream.
  [[noreturn]] void fail_member(const std::string& problem) {
    bool after_the_end = members_ > 0 && member_output_ == produced();
    if (!after_the_end) fail(problem);
    throw CompressedStreamError(
        path_, member_start_,
        fmt::format("the compressed stream ended at this offset, but {} more bytes "
                    "follow that are not another compressed stream",
                    file_size_after(member_start_)));
  }

  int64_t file_size_after(int64_t offset) {
    while (!file_ended_) refill_counting();
    return file_read_ - offset;
  }

  void refill_counting() {
    std::vector<char> scratch(kChunk);
    size_t got = read_raw(file_.get(), path_, scratch.data(), scratch.size());
    file_read_ += static_cast<int64_t>(got);
    file_ended_ = got == 0;
  }

  [[noreturn]] void fail(const std::string& problem) {
    throw CompressedStreamError(path_, compressed_offset(),
                                problem + " (offset in the compressed file)");
  }

  std::string path_;
  FilePtr file_;
  std::vector<char> input_;
  z_stream stream_{};
  bool file_ended_ = false, in_member_ = false, finished_ = false;
  int64_t position_ = 0, file_read_ = 0;
  uInt requested_ = 0;
  int64_t members_ = 0, member_start_ = 0, member_output_ = 0;  // completed; where this one began
};

class FileOutput : public OutputStream {
 public:
  explicit FileOutput(const std::string& path) : path_(path), file_(open_file_for_writing(path)) {}
  void write(const char* data, size_t size) override {
    if (std::fwrite(data, 1, size, file_.get()) != size) throw IoError("write", path_, errno);
  }
  void close() override {
    if (!file_) return;
    bool ok = std::fflush(file_.get()) == 0;
    ok = std::fclose(file_.release()) == 0 && ok;
    if (!ok) throw IoError("write", path_, errno);
  }

 private:
  std::string path_;
  FilePtr file_;
};

class DeflateOutput : public OutputStream {
 public:
  DeflateOutput(const std::string& path, Compression compression) : file_(path), output_(kChunk) {
    if (deflateInit2(&stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(compression), 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      throw InternalError("zlib deflateInit2 failed");
  }
  ~DeflateOutput() override { deflateEnd(&stream_); }
  void write(const char* data, size_t size) override {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    stream_.avail_in = static_cast<uInt>(size);
    while (stream_.avail_in > 0) deflate_some(Z_NO_FLUSH);
  }
  void close() override {
    if (closed_) return;
    while (deflate_some(Z_FINISH) != Z_STREAM_END) {
    }
    closed_ = true;
    file_.close();
  }

 private:
  int deflate_some(int flush) {
    stream_.next_out = reinterpret_cast<Bytef*>(output_.data());
    stream_.avail_out = static_cast<uInt>(output_.size());
    int status = deflate(&stream_, flush);
    KILN_ASSERT(status != Z_STREAM_ERROR);
    file_.write(output_.data(), output_.size() - stream_.avail_out);
    return status;
  }

  FileOutput file_;
  std::vector<char> output_;
  z_stream stream_{};
  bool closed_ = false;
};

}  // namespace

const char* compression_name(Compression compression) {
  switch (compression) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZlib:
      return "zlib";
  }
  return "none";
}

Compression parse_compression(const std::string& name) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib})
    if (name == compression_name(c)) return c;
  throw Error("unknown compression \"" + name + "\"; known: none, gzip, zlib");
}

Compression detect_compression(const std::string& first_bytes) {
  // Uncompressed framing is recognised by its first length CRC, since a length's bytes can look
  // like a zlib header (a 376-byte first record starts 78 01).
  if (first_bytes.size() >= 12) {
    uint32_t stored = 0;
    for (int i = 3; i >= 0; --i) stored = (stored << 8) | static_cast<uint8_t>(first_bytes[8 + i]);
    if (crc32c_mask(crc32c(first_bytes.data(), 8)) == stored) return Compression::kNone;
  }
  if (first_bytes.size() < 2) return Compression::kNone;
  auto b0 = static_cast<uint8_t>(first_bytes[0]), b1 = static_cast<uint8_t>(first_bytes[1]);
  if (b0 == 0x1f && b1 == 0x8b) return Compression::kGzip;
  // RFC 1950: deflate, a window of at most 32 KiB, and the two header bytes a multiple of 31.
  bool zlib = (b0 & 0x0f) == 8 && (b0 >> 4) <= 7 && ((b0 << 8) | b1) % 31 == 0;
  return zlib ? Compression::kZlib : Compression::kNone;
}

Compression detect_file_compression(const std::string& path) {
  FilePtr file = open_file_for_reading(path);
  std::string head(12, '\0');
  head.resize(read_raw(file.get(), path, head.data(), head.size()));
  return detect_compression(head);
}

std::unique_ptr<InputStream> open_input(const std::string& path, Compression compression) {
  if (compression == Compression::kNone) return std::make_unique<FileInput>(path);
  return std::make_unique<InflateInput>(path, compression);
}

std::unique_ptr<OutputStream> open_output(const std::string& path, Compression compression) {
  if (compression == Compression::kNone) return std::make_unique<FileOutput>(path);
  return std::make_unique<DeflateOutput>(path, compression);
}

}  // namespace kiln::io
