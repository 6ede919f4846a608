#include "kiln/core/config_section.h"

#include "kiln/core/error.h"

namespace kiln {
namespace {

std::map<std::string, ConfigSectionType>& section_types() {
  static std::map<std::string, ConfigSectionType> types;
  return types;
}

}  // namespace

const std::map<std::string, ConfigSectionType>& config_section_types() { return section_types(); }

bool register_config_section(const std::string& key, ConfigSectionType type) {
  if (!section_types().emplace(key, std::move(type)).second)
    throw InternalError("the config section '" + key + "' is registered twice");
  return true;
}

void OptionTraits<ConfigSectionValue>::read(const Json& value, ConfigSectionValue& out,
                                            const ReadContext& ctx) {
  if (value.is_null()) {
    out.resolved.reset();
    return;
  }
  auto type = config_section_types().find(out.key);
  if (type == config_section_types().end())
    throw InternalError("no config section '" + out.key + "' is registered");
  out.resolved = type->second.resolve(value, ctx);
}

void describe_config_sections(Schema& schema, ConfigSections& sections) {
  for (const auto& [key, type] : config_section_types()) {
    ConfigSectionValue& value = sections[key];
    value.key = key;
    schema.field(key, value, type.help);
  }
}

}  // namespace kiln
