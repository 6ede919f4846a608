// JSON text from outside kiln (request bodies, run files, study rows) as core/json_text.h parses
// it: any bytes give a tree or a JsonTextError, never a crash. A tree it returns nests no deeper
// than kMaxJsonDepth (walked here without recursion), and dumping it and parsing the dump gives
// the same tree, so what kiln accepted can be written back.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/json_text.h"

namespace {

size_t depth_of(const kiln::Json& root) {
  size_t deepest = 0;
  std::vector<std::pair<const kiln::Json*, size_t>> pending = {{&root, 1}};
  while (!pending.empty()) {
    auto [node, depth] = pending.back();
    pending.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth);
    for (const kiln::Json& child : *node) pending.push_back({&child, depth + 1});
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kiln::Json tree;
  try {
    tree = kiln::parse_json_text(text);
  } catch (const kiln::JsonTextError&) {
    return 0;
  }
  if (depth_of(tree) > kiln::kMaxJsonDepth) std::abort();  // the limit let a deeper tree through
  std::string dumped = tree.dump(-1, ' ', false, kiln::Json::error_handler_t::replace);
  try {
    kiln::Json again = kiln::parse_json_text(dumped);
    // Text that is not UTF-8 dumps with replacement characters; anything else reads back.
    if (dumped == tree.dump(-1, ' ', false, kiln::Json::error_handler_t::strict) && again != tree)
      std::abort();
  } catch (const kiln::JsonTextError&) {
    std::abort();  // kiln's own dump of an accepted tree is refused
  } catch (const kiln::Json::type_error&) {
  }
  return 0;
}
