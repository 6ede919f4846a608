#pragma once
// Dotted config paths (`callbacks[1].patience`): parsing for `--set`, building for error messages,
// and where each value of a merged config came from.
// Thread-safety: values; Origins is not synchronised.

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "kiln/core/json.h"

namespace kiln {

/// One step of a path: an object key or a list index.
using PathStep = std::variant<std::string, size_t>;

/// Parses `a.b[2].c`; throws ConfigError naming the path when it is malformed.
std::vector<PathStep> parse_config_path(const std::string& path);

/// `parent.key`, or `key` when the parent is the root.
std::string child_path(const std::string& parent, const std::string& key);
/// `parent[index]`.
std::string index_path(const std::string& parent, size_t index);

/// Records which source (a file name, or `--set`) supplied each value of a merged config.
class Origins {
 public:
  /// Marks `value` at `path` and everything below it as coming from `origin`.
  void record(const std::string& path, const Json& value, const std::string& origin);
  /// The origin of `path`, or of its nearest recorded ancestor; empty when unknown.
  std::string find(const std::string& path) const;

 private:
  std::map<std::string, std::string> by_path_;
};

}  // namespace kiln
