// Config files, YAML or JSON (the first byte's low bit says which), then deep-merged as
// `-c a.yaml -c b.yaml` does: the rest of the input is two documents, split where
// FuzzedDataProvider's random-length string ends (a lone backslash). A config that parses must
// also write back (to_yaml, as a run folder's config.yaml is written) and read back the same, so
// that `kiln eval RUN` sees the config the run trained with.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/core/config.h"
#include "kiln/core/error.h"

namespace {

// NaNs are unequal to themselves, so trees compare by their text; bytes that are not UTF-8, if
// any got this far, must not make the comparison itself throw.
std::string text_of(const kiln::Json& tree) {
  return tree.dump(-1, ' ', false, kiln::Json::error_handler_t::replace);
}

void check_round_trip(const kiln::Json& tree) {
  std::string yaml = kiln::to_yaml(tree);
  kiln::Json again = kiln::parse_config_text(yaml, "config.yaml (written back)", false);
  if (text_of(again) != text_of(tree)) {
    std::fprintf(stderr,
                 "a config does not read back as written:\n%s\nwritten as\n%s\nread back as\n%s\n",
                 text_of(tree).c_str(), yaml.c_str(), text_of(again).c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool is_json = data[0] & 1;
  FuzzedDataProvider input(data + 1, size - 1);
  std::string first = input.ConsumeRandomLengthString(),
              second = input.ConsumeRemainingBytesAsString();
  kiln::Json base, overlay;
  try {
    base = kiln::parse_config_text(first, "a.yaml", is_json);
  } catch (const kiln::Error&) {
    return 0;
  }
  check_round_trip(base);
  // An empty second file (most inputs: no split) is no JSON at all; skip the merge then.
  if (second.empty()) return 0;
  try {
    overlay = kiln::parse_config_text(second, "b.yaml", is_json);
  } catch (const kiln::Error&) {
    return 0;
  }
  kiln::deep_merge(base, overlay);
  check_round_trip(base);
  return 0;
}
