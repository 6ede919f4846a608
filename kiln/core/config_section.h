#pragma once
// Top-level config sections that a folder above the engine owns (`tune:`, by tune/). The owner
// registers its section here; the experiment config reads and checks every registered section
// with the rest of a config (so `kiln train` refuses a wrong `tune:` as early as `kiln tune`
// does) and keeps each one resolved, defaults filled in, as JSON that the owner reads back into
// its own options. The experiment config so knows no section's type, and a new folder adds a
// section without touching it.
// Thread-safety: sections register during static initialisation and are only read after it.

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "kiln/core/json.h"
#include "kiln/core/schema.h"

namespace kiln {

struct ConfigSectionType {
  std::string help;  // as `kiln list` and docs/config.md show the key
  /// Reads `node` (not null) at `ctx`, throwing ConfigError there, and returns it resolved.
  std::function<Json(const Json& node, const ReadContext& ctx)> resolve;
};

/// Every registered section by its top-level key.
const std::map<std::string, ConfigSectionType>& config_section_types();
/// Registers the section `key`; an InternalError when the key is taken. Returns true, for a
/// namespace-scope `const bool` that runs it.
bool register_config_section(const std::string& key, ConfigSectionType type);

/// Registers `key` as an options struct (docs/design.md §3): read with its schema, resolved as
/// `write_options` writes it.
template <class Options>
bool register_options_section(const std::string& key, std::string help) {
  return register_config_section(key,
                                 {std::move(help), [](const Json& node, const ReadContext& ctx) {
                                    Options options;
                                    OptionTraits<Options>::read(node, options, ctx);
                                    return write_options(options);
                                  }});
}

/// The options of a section that a config's reading resolved (`resolved`), read back; none when
/// the config had no such section.
template <class Options>
std::optional<Options> read_resolved_section(const std::optional<Json>& resolved,
                                             const std::string& key) {
  if (!resolved) return std::nullopt;
  Options options;
  OptionTraits<Options>::read(*resolved, options, ReadContext{key});
  return options;
}

/// One registered section in a config: absent (null), or its resolved value.
struct ConfigSectionValue {
  std::string key;
  std::optional<Json> resolved;
};

template <>
struct OptionTraits<ConfigSectionValue> {
  static void read(const Json& value, ConfigSectionValue& out, const ReadContext& ctx);
  static Json write(const ConfigSectionValue& value) {
    return value.resolved ? *value.resolved : Json();
  }
  static std::string type_name(const ConfigSectionValue&) { return "mapping | null"; }
};

/// A config's registered sections, by key: each registered key is there once the config's
/// options have been described.
using ConfigSections = std::map<std::string, ConfigSectionValue>;

/// Declares every registered section as a field of `schema`, bound to its entry in `sections`.
void describe_config_sections(Schema& schema, ConfigSections& sections);

}  // namespace kiln
