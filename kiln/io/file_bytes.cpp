#include "kiln/io/file_bytes.h"

#include <zlib.h>

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"

namespace kiln::io {

std::string read_file_bytes(const std::string& path, size_t max_bytes) {
  return read_whole_file(path, max_bytes);
}

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
         static_cast<uint8_t>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& compressed, const std::string& name, size_t limit) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
    throw InternalError("zlib inflateInit2 failed");
  std::string out;
  char chunk[1 << 16];
  size_t fed = 0;
  int status = Z_OK;
  while (status == Z_OK && out.size() <= limit) {
    if (stream.avail_in == 0 && fed < compressed.size()) {
      // zlib counts input in 32-bit units: feed a large file in pieces.
      size_t piece = std::min<size_t>(compressed.size() - fed, size_t{1} << 30);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + fed));
      stream.avail_in = static_cast<uInt>(piece);
      fed += piece;
    }
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof(chunk);
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - stream.avail_out);
    if (status == Z_BUF_ERROR && stream.avail_in == 0 && fed == compressed.size()) break;
    if (status == Z_BUF_ERROR) status = Z_OK;  // no progress possible this round only
  }
  int64_t offset = static_cast<int64_t>(stream.total_in);
  std::string reason = stream.msg ? stream.msg : "the stream ends before its end marker";
  inflateEnd(&stream);
  if (out.size() > limit)
    throw DataError(name, -1, offset,
                    fmt::format("the gzip stream inflates to more than {} bytes, the most kiln "
                                "reads into memory",
                                limit));
  if (status != Z_STREAM_END)
    throw DataError(name, -1, offset, "corrupt or truncated gzip stream: " + reason);
  return out;
}

}  // namespace kiln::io
