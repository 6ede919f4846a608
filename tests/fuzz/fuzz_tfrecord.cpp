// TFRecord files as kiln reads its training data: plain, gzip or zlib, each record checked by its
// two CRCs, damaged records skipped. The first byte says how the rest reaches the reader:
//   bits 0-1  the stream's compression: none, gzip, zlib (3: none)
//   bit 2     compressed here first, so that mutations reach the framing inside a valid stream;
//             else written as is, so that the inflater meets damaged streams
//   bit 3     the compression detected from the file rather than named
//   bit 4     the reader resynchronizes after a damaged frame
//   bit 5     `kiln data inspect` reads the file instead (records decoded as tf.Examples)

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/core/error.h"
#include "kiln/io/record_inspect.h"
#include "kiln/io/tfrecord.h"
#include "tests/fuzz/temp_file.h"

namespace {

using kiln::io::Compression;

std::string deflate_bytes(const std::string& bytes, Compression compression) {
  z_stream stream{};
  deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, compression == Compression::kGzip ? 31 : 15, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// Reads to the end as a dataset that skips damaged records does: each error is one record lost.
void read_all(const std::string& path, std::optional<Compression> compression, bool resync) {
  kiln::io::TfRecordReader reader(path, compression);
  if (resync) reader.resynchronize_after_damage();
  std::string record;
  for (;;) {
    try {
      if (!reader.next(record)) return;
    } catch (const kiln::DataError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0];
  Compression compression = static_cast<Compression>((mode & 3) % 3);
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((mode & 4) && compression != Compression::kNone) bytes = deflate_bytes(bytes, compression);
  const std::string& path = kiln::fuzz::write_temp_file(bytes);
  std::optional<Compression> named;
  if (!(mode & 8)) named = compression;
  try {
    if (mode & 32) {
      // Its report is JSON text: bytes that are not UTF-8 must not reach it as strings.
      kiln::io::inspect_tfrecord(path, named).dump();
    } else {
      read_all(path, named, mode & 16);
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
