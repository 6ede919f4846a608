// tf.train.Example records, as read from TFRecord files written by any TensorFlow tool. What kiln
// decodes it must also encode stably: kiln's converters write what it reads, so a decoded record,
// encoded, must decode and encode again to the same bytes (NaN floats included).

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
  kiln::io::Example parsed;
  try {
    parsed = kiln::io::parse_example(bytes, {"fuzz.tfrecord", 0, 0});
    encoded = kiln::io::encode_example(parsed);
  } catch (const kiln::Error&) {
    return 0;
  }
  // Parsing into an Example that held another record (a pass over a file) reads the same values,
  // and leaves the other record's features without values.
  kiln::io::Example reused;
  reused.features["kiln_fuzz_left_over"] = kiln::io::int64_feature({7});
  kiln::io::parse_example_into(bytes, reused);
  for (const auto& [name, feature] : reused.features) {
    auto found = parsed.features.find(name);
    // Compared encoded: a NaN float equals itself there, not as a float.
    auto encoded_alone = [&name = name](const kiln::io::Feature& f) {
      return kiln::io::encode_example(kiln::io::Example{{{name, f}}});
    };
    bool same = found == parsed.features.end()
                    ? feature.size() == 0
                    : encoded_alone(feature) == encoded_alone(found->second);
    if (!same) {
      std::fprintf(stderr, "parse_example_into differs from parse_example at \"%s\"\n",
                   name.c_str());
      std::abort();
    }
  }
  // Not inside the try: kiln's own encoding failing to decode is a finding.
  if (kiln::io::encode_example(kiln::io::parse_example(encoded)) != encoded) {
    std::fprintf(stderr, "an Example does not survive encode -> parse -> encode\n");
    std::abort();
  }
  return 0;
}
