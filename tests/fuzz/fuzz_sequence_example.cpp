// tf.train.SequenceExample records (context features and feature lists), as read from TFRecord
// files that TensorFlow tools write. What kiln decodes it must also encode stably: a decoded
// record, encoded, must decode and encode again to the same bytes (NaN floats included).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "kiln/io/record_inspect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  kiln::io::looks_like_sequence_example(bytes);
  std::string encoded;
  try {
    encoded = kiln::io::encode_sequence_example(
        kiln::io::parse_sequence_example(bytes, {"fuzz.tfrecord", 0, 0}));
  } catch (const kiln::Error&) {
    return 0;
  }
  // Not inside the try: kiln's own encoding failing to decode is a finding.
  if (kiln::io::encode_sequence_example(kiln::io::parse_sequence_example(encoded)) != encoded) {
    std::fprintf(stderr, "a SequenceExample does not survive encode -> parse -> encode\n");
    std::abort();
  }
  return 0;
}
