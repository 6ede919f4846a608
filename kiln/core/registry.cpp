#include "kiln/core/registry.h"

#include "kiln/core/suggest.h"

namespace kiln {
namespace {

std::map<std::string, RegistryBase*>& registries_by_kind() {
  static std::map<std::string, RegistryBase*> registries;
  return registries;
}

// "a scheduler", "an optimizer".
std::string a_kind(const std::string& kind) {
  bool vowel = !kind.empty() && std::string("aeiou").find(kind.front()) != std::string::npos;
  return (vowel ? "an " : "a ") + kind;
}

}  // namespace

std::string ComponentSpec::type() const {
  // An optional component left null is for its owner to skip; one it needs is the user's to give.
  if (empty())
    throw ConfigError(path, "",
                      "expected " + a_kind(kind) + ": NAME or {type: NAME, ...}, got null");
  return spec.is_string() ? spec.get<std::string>() : spec.at("type").get<std::string>();
}

Json ComponentSpec::options() const {
  Json options = spec.is_object() ? spec : Json::object();
  options.erase("type");
  return options;
}

RegistryBase::RegistryBase(std::string kind, std::string doc)
    : kind_(std::move(kind)), doc_(std::move(doc)) {
  auto [it, inserted] = registries_by_kind().emplace(kind_, this);
  if (!inserted) registration_errors().push_back("two registries of kind \"" + kind_ + "\"");
}

std::string RegistryBase::spec_type(const Json& spec, const ReadContext& ctx) const {
  std::string shape_hint = "expected " + a_kind(kind_) + ": NAME or {type: NAME, ...}";
  std::string type;
  ReadContext type_ctx = ctx;
  if (spec.is_string()) {
    type = spec.get<std::string>();
  } else if (spec.is_object()) {
    if (!spec.contains("type")) ctx.fail("missing key \"type\"; " + shape_hint);
    type_ctx = ctx.child("type");
    if (!spec.at("type").is_string()) type_ctx.fail(shape_hint + ", got " + show_value(spec));
    type = spec.at("type").get<std::string>();
  } else {
    ctx.fail(shape_hint + ", got " + show_value(spec));
  }
  std::vector<std::string> known = names();
  for (const auto& name : known)
    if (name == type) return type;
  type_ctx.fail("unknown " + kind_ + " \"" + type + "\"; " + suggestion_text(type, known));
}

RegistryBase& registry_for_kind(const std::string& kind) {
  auto it = registries_by_kind().find(kind);
  if (it == registries_by_kind().end())
    throw InternalError("no registry of kind \"" + kind + "\" is linked in");
  return *it->second;
}

std::vector<RegistryBase*> all_registries() {
  std::vector<RegistryBase*> out;
  for (const auto& [kind, registry] : registries_by_kind()) out.push_back(registry);
  return out;
}

std::vector<std::string>& registration_errors() {
  static std::vector<std::string> errors;
  return errors;
}

void OptionTraits<ComponentSpec>::read(const Json& value, ComponentSpec& out,
                                       const ReadContext& ctx) {
  out.path = ctx.path;
  out.spec = value.is_null() ? Json() : registry_for_kind(out.kind).resolve(value, ctx);
}

ComponentList::ComponentList(std::string kind_name, std::vector<Json> initial)
    : kind(std::move(kind_name)) {
  for (auto& spec : initial) items.emplace_back(kind, std::move(spec));
}

void OptionTraits<ComponentList>::read(const Json& value, ComponentList& out,
                                       const ReadContext& ctx) {
  std::vector<ComponentSpec> items;
  auto read_item = [&](const Json& item, const ReadContext& item_ctx) {
    if (item.is_null())
      item_ctx.fail("expected " + a_kind(out.kind) + ": NAME or {type: NAME, ...}, got null");
    items.emplace_back(out.kind);
    OptionTraits<ComponentSpec>::read(item, items.back(), item_ctx);
  };
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) read_item(value[i], ctx.at(i));
  } else if (!value.is_null()) {
    read_item(value, ctx);
  }
  out.items = std::move(items);
}

void OptionTraits<ComponentMap>::read(const Json& value, ComponentMap& out,
                                      const ReadContext& ctx) {
  if (!value.is_object() && !value.is_null())
    ctx.fail("expected a mapping of names to " + out.kind + "s, got " + show_value(value));
  std::map<std::string, ComponentSpec> items;
  if (value.is_object())
    for (const auto& [name, spec] : value.items()) {
      ReadContext at = ctx.child(name);
      if (spec.is_null())
        at.fail("expected " + a_kind(out.kind) + ": NAME or {type: NAME, ...}, got null");
      ComponentSpec& item = items.emplace(name, ComponentSpec(out.kind)).first->second;
      OptionTraits<ComponentSpec>::read(spec, item, at);
    }
  out.items = std::move(items);
}

Json OptionTraits<ComponentMap>::write(const ComponentMap& value) {
  Json out = Json::object();
  for (const auto& [name, item] : value.items) out[name] = item.spec;
  return out;
}

Json OptionTraits<ComponentList>::write(const ComponentList& value) {
  Json list = Json::array();
  for (const auto& item : value.items) list.push_back(item.spec);
  return list;
}

}  // namespace kiln
