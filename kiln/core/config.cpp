#include "kiln/core/config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/core/yaml_json.h"

namespace kiln {
namespace {

bool has_suffix(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Json& step_into(Json& node, const PathStep& step, const std::string& path,
                const std::string& origin) {
  if (const auto* key = std::get_if<std::string>(&step)) {
    if (node.is_null()) node = Json::object();
    // A component named alone (`optimizer: sgd`) takes options as `{type: sgd, ...}` would.
    if (node.is_string() && *key != "type") node = Json{{"type", node}};
    if (!node.is_object())
      throw ConfigError(path, origin, "'" + *key + "' is not inside a mapping");
    return node[*key];
  }
  size_t index = std::get<size_t>(step);
  if (!node.is_array() || index >= node.size()) {
    size_t size = node.is_array() ? node.size() : 0;
    throw ConfigError(path, origin,
                      fmt::format("index {} is out of range (the list has {} items)", index, size));
  }
  return node[index];
}

// The first control character of `text` other than tab and line ends (CR only before LF): a NUL
// makes yaml-cpp take the text for UTF-16 or UTF-32, and a lone CR stays inside plain values, so
// that the saved config would not read back the same.
size_t first_control_character(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    bool line_end = c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n');
    if (c < 0x20 && c != '\t' && !line_end) return i;
  }
  return std::string::npos;
}

// Size and encoding, checked before any parser sees the text: a config is UTF-8 text of a
// reasonable size, and a message about a stray byte names where it is.
void check_config_text(const std::string& text, const std::string& origin) {
  if (text.size() > kMaxConfigBytes)
    throw ConfigError(
        "", origin,
        fmt::format("{} bytes is more than a config may hold ({})", text.size(), kMaxConfigBytes));
  size_t invalid = first_invalid_utf8(text), control = first_control_character(text);
  size_t bad = std::min(invalid, control);
  if (bad == std::string::npos) return;
  size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + bad, '\n'));
  size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
  size_t column = line_start == std::string::npos || bad == 0 ? bad + 1 : bad - line_start;
  throw ConfigError("", origin,
                    fmt::format("byte 0x{:02x} at line {}, column {} (offset {}) is {}; configs "
                                "must be UTF-8 text",
                                static_cast<uint8_t>(text[bad]), line, column, bad,
                                bad == invalid ? "not UTF-8" : "a control character"));
}

// A repeated key and deep nesting are refused, and the tree is built in time linear in the text
// (json_text.h; nlohmann's own parse with a callback searched an object's keys for each key).
Json parse_json_config(const std::string& text, const std::string& origin) {
  try {
    return parse_json_with_comments(text, YamlLimits{}.max_depth);
  } catch (const JsonTextError& e) {
    throw ConfigError("", origin, std::string("invalid JSON: ") + e.what());
  }
}

}  // namespace

Json parse_config_text(const std::string& text, const std::string& origin, bool is_json) {
  check_config_text(text, origin);
  if (is_json) return parse_json_config(text, origin);
  check_yaml_size(text, origin);
  try {
    YAML::Node node = YAML::Load(text);
    return yaml_to_json(node, origin);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard, far deeper than ours, reports itself as "bad file".
    throw ConfigError("", origin,
                      fmt::format("nested more than {} levels deep (line {}, column {})",
                                  YamlLimits{}.max_depth, e.mark.line + 1, e.mark.column + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("", origin,
                      fmt::format("invalid YAML at line {}, column {}: {}", e.mark.line + 1,
                                  e.mark.column + 1, e.msg));
  }
}

Json load_config_file(const std::string& path) {
  bool is_json = has_suffix(path, ".json");
  if (!is_json && !has_suffix(path, ".yaml") && !has_suffix(path, ".yml"))
    throw ConfigError("", path, "unknown config file type; expected .yaml, .yml or .json");
  std::string text;
  try {
    text = read_text_file(path, kMaxConfigBytes);  // bounded before reading: not /dev/zero
  } catch (const DataError& e) {
    throw ConfigError("", path, e.what());
  }
  Json tree = parse_config_text(text, path, is_json);
  if (tree.is_null()) return Json::object();
  if (!tree.is_object())
    throw ConfigError("", path, "the top level of a config must be a mapping of keys to values");
  return tree;
}

void deep_merge(Json& base, const Json& overlay) {
  if (!base.is_object() || !overlay.is_object()) {
    base = overlay;
    return;
  }
  for (const auto& [key, value] : overlay.items()) deep_merge(base[key], value);
}

void apply_override(RawConfig& config, const std::string& assignment) {
  check_config_text(assignment, "--set");
  size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw ConfigError(assignment, "--set", "expected PATH=VALUE, e.g. train.max=\"2 epochs\"");
  std::string path = assignment.substr(0, equals);
  Json value = parse_config_text(assignment.substr(equals + 1), "--set " + path, false);
  set_config_value(config, path, value, "--set");
}

void set_config_value(RawConfig& config, const std::string& path, const Json& value,
                      const std::string& origin) {
  Json* node = &config.tree;
  for (const auto& step : parse_config_path(path)) node = &step_into(*node, step, path, origin);
  *node = value;
  config.origins.record(path, value, origin);
}

RawConfig load_config(const std::vector<std::string>& files,
                      const std::vector<std::string>& overrides) {
  RawConfig config;
  for (const auto& file : files) {
    Json tree = load_config_file(file);
    deep_merge(config.tree, tree);
    config.origins.record("", tree, file);
  }
  for (const auto& assignment : overrides) apply_override(config, assignment);
  return config;
}

std::string to_yaml(const Json& tree) {
  YAML::Emitter out;
  emit_yaml(out, tree);
  return std::string(out.c_str()) + "\n";
}

}  // namespace kiln
