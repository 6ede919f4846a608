#pragma once
// Sequential byte streams over a file, optionally inflated (gzip or zlib) on the fly, so that
// record readers never hold a whole file in memory and a truncated or corrupt compressed stream
// is reported with the file name and the compressed offset where it broke.
// Thread-safety: one thread per stream.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace kiln::io {

/// How a record file is compressed: the whole stream, as tf.io.TFRecordOptions does it.
enum class Compression { kNone, kGzip, kZlib };

/// `none`, `gzip` or `zlib`.
const char* compression_name(Compression compression);
/// Parses a compression name; throws Error listing the valid names.
Compression parse_compression(const std::string& name);
/// Looks at the first 12 bytes: a valid TFRecord length CRC, the gzip magic, a zlib header.
Compression detect_compression(const std::string& first_bytes);
/// Opens `path` and detects its compression; throws IoError.
Compression detect_file_compression(const std::string& path);

/// Reads bytes in order; `read` returns fewer than asked only at the end of the stream.
class InputStream {
 public:
  virtual ~InputStream() = default;
  /// Reads up to `size` bytes into `out`; throws DataError/IoError naming the file.
  virtual size_t read(char* out, size_t size) = 0;
  /// Bytes delivered so far (offsets in the uncompressed stream).
  virtual int64_t position() const = 0;
};

/// Opens `path` for reading, inflating it when `compression` says so; throws IoError.
std::unique_ptr<InputStream> open_input(const std::string& path, Compression compression);

/// Writes bytes in order, compressing them when asked.
class OutputStream {
 public:
  virtual ~OutputStream() = default;
  virtual void write(const char* data, size_t size) = 0;
  /// Flushes, ends the compressed stream and closes the file; throws IoError.
  virtual void close() = 0;
};

/// Creates (truncates) `path`; throws IoError.
std::unique_ptr<OutputStream> open_output(const std::string& path, Compression compression);

}  // namespace kiln::io
