#pragma once
// Loading a config: YAML or JSON files (JSON may carry // and /* */ comments), deep-merged in the
// order given, then `--set path=value` overrides (docs/design.md §4). The result is a raw tree plus
// the origin of every value; the options structs (schema.h) turn it into typed, checked values.
// Thread-safety: pure functions over values.

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/core/config_path.h"
#include "kiln/core/json.h"

namespace kiln {

/// A merged, not yet validated config and where each of its values came from.
struct RawConfig {
  Json tree = Json::object();
  Origins origins;
};

/// The largest config text read (16 MiB): configs are written by people and tools, not data.
constexpr size_t kMaxConfigBytes = size_t{16} << 20;

/// Parses YAML (`.yaml`/`.yml`) or JSON (`.json`) text; `origin` names it in errors. Refuses
/// text that is not UTF-8 or larger than kMaxConfigBytes, duplicate keys, recursive aliases and
/// documents that nest or expand beyond YamlLimits.
Json parse_config_text(const std::string& text, const std::string& origin, bool is_json);
/// Reads and parses a config file, by extension. Throws ConfigError or IoError.
Json load_config_file(const std::string& path);

/// Merges `overlay` into `base`: objects merge key by key, everything else (lists included)
/// replaces.
void deep_merge(Json& base, const Json& overlay);

/// Applies one `path=value` override; the value is parsed as YAML (`3`, `1e-3`, `[1, 2]`,
/// `"2 epochs"`). Missing objects on the way are created.
void apply_override(RawConfig& config, const std::string& assignment);

/// Sets the value at `path` (missing objects on the way are created; a component given by its
/// name alone becomes `{type: NAME}` to take an option) and records `origin` for it.
void set_config_value(RawConfig& config, const std::string& path, const Json& value,
                      const std::string& origin);

/// Files (later over earlier) then overrides, as `kiln train -c a.yaml -c b.yaml --set k=v` does.
RawConfig load_config(const std::vector<std::string>& files,
                      const std::vector<std::string>& overrides);

/// Block-style YAML for run directories and `kiln config show`.
std::string to_yaml(const Json& tree);

}  // namespace kiln
