#include "kiln/core/config_path.h"

#include <cctype>

#include "kiln/core/error.h"

namespace kiln {
namespace {

[[noreturn]] void bad_path(const std::string& path, const std::string& why) {
  throw ConfigError(path, "--set",
                    "malformed config path: " + why + " (expected keys and indices like a.b[2].c)");
}

size_t parse_index(const std::string& path, size_t& pos) {
  size_t close = path.find(']', pos);
  if (close == std::string::npos) bad_path(path, "unclosed '['");
  std::string digits = path.substr(pos + 1, close - pos - 1);
  if (digits.empty()) bad_path(path, "empty index");
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) bad_path(path, "index '" + digits + "'");
  pos = close + 1;
  // No list holds a billion items; longer digit strings would overflow stoul.
  if (digits.size() > 9) bad_path(path, "index '" + digits + "' is out of range");
  return std::stoul(digits);
}

}  // namespace

std::vector<PathStep> parse_config_path(const std::string& path) {
  std::vector<PathStep> steps;
  size_t pos = 0;
  while (pos < path.size()) {
    if (path[pos] == '[') {
      if (steps.empty()) bad_path(path, "starts with an index");
      steps.emplace_back(parse_index(path, pos));
      if (pos < path.size() && path[pos] == '.') ++pos;
      continue;
    }
    size_t end = path.find_first_of(".[", pos);
    if (end == std::string::npos) end = path.size();
    if (end == pos) bad_path(path, "empty key");
    steps.emplace_back(path.substr(pos, end - pos));
    pos = end;
    if (pos < path.size() && path[pos] == '.') {
      ++pos;
      if (pos == path.size()) bad_path(path, "ends with '.'");
    }
  }
  if (steps.empty()) bad_path(path, "empty path");
  return steps;
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

void Origins::record(const std::string& path, const Json& value, const std::string& origin) {
  by_path_[path] = origin;
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) record(child_path(path, key), child, origin);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) record(index_path(path, i), value[i], origin);
  }
}

std::string Origins::find(const std::string& path) const {
  std::string probe = path;
  while (true) {
    auto it = by_path_.find(probe);
    if (it != by_path_.end()) return it->second;
    size_t cut = probe.find_last_of(".[");
    if (cut == std::string::npos) break;
    probe.resize(cut);
  }
  auto root = by_path_.find("");
  return root == by_path_.end() ? "" : root->second;
}

}  // namespace kiln
