#pragma once
// The in-memory form of every config: an insertion-ordered JSON tree, so dumps keep the order the
// user (or the options struct) wrote keys in. JSON text from outside is read through
// core/json_text.h, which bounds its depth and its count of values before building the tree.

#include <nlohmann/json.hpp>

#include <string>

namespace kiln {
using Json = nlohmann::ordered_json;

/// `value` as messages show it: JSON, except NaN and infinities as YAML writes them (.nan, .inf;
/// JSON would say null) and bytes that are not UTF-8 escaped; long values are cut short.
std::string show_value(const Json& value);
}  // namespace kiln
