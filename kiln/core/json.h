#pragma once
// The in-memory form of every config: an insertion-ordered JSON tree, so dumps keep the order the
// user (or the options struct) wrote keys in.

#include <nlohmann/json.hpp>

namespace kiln {
using Json = nlohmann::ordered_json;
}  // namespace kiln
