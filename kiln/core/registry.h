#pragma once
// Registries of named components (docs/design.md §3). Each kind of component (layer, model, loss,
// metric, optimizer, dataset, transform, ...) has one Registry; a component file registers itself
// with one line:
//
//   KILN_REGISTER(layer_registry, "relu", Relu, NoOptions, "Rectified linear unit.");
//
// A config names a component as `NAME` or `{type: NAME, option: value, ...}`. Specs are resolved
// (checked, defaults filled in) when the config is read, so a typo fails before any work starts;
// `create` later builds the object from the resolved spec.
// Thread-safety: registration happens during static initialisation; afterwards registries are
// read-only and safe to share.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/schema.h"

namespace kiln {

/// A component chosen in the config: its registry kind and its resolved `{type, options...}`.
struct ComponentSpec {
  std::string kind;  // registry kind, e.g. "layer"
  Json spec;         // `{"type": NAME, ...}` once resolved; a bare name or null before
  std::string path;  // where in the config it was given, for errors while building

  ComponentSpec() = default;
  ComponentSpec(std::string kind_name, Json initial = nullptr)
      : kind(std::move(kind_name)), spec(std::move(initial)) {}
  bool empty() const { return spec.is_null(); }
  std::string type() const;
  Json options() const;  // the spec without its "type"
};

/// Components of one kind given as a list (`layers: [relu, {type: linear, out: 10}]`); a single
/// spec is read as a one-item list.
struct ComponentList {
  std::string kind;
  std::vector<ComponentSpec> items;

  explicit ComponentList(std::string kind_name = "", std::vector<Json> initial = {});
};

/// Components of one kind by names the user chooses (`columns: {age: numeric, ...}`).
struct ComponentMap {
  std::string kind;
  std::map<std::string, ComponentSpec> items;
  explicit ComponentMap(std::string kind_name = "") : kind(std::move(kind_name)) {}
};

/// What `kiln list` shows of one registered component.
struct ComponentDoc {
  std::string name, doc;
  std::vector<FieldDoc> options;
};

/// The kind-independent face of a registry.
class RegistryBase {
 public:
  RegistryBase(std::string kind, std::string doc);
  virtual ~RegistryBase() = default;
  RegistryBase(const RegistryBase&) = delete;
  RegistryBase& operator=(const RegistryBase&) = delete;

  const std::string& kind() const { return kind_; }
  const std::string& doc() const { return doc_; }
  virtual std::vector<std::string> names() const = 0;
  virtual std::vector<ComponentDoc> documents() const = 0;
  /// Checks a spec (`NAME` or `{type: NAME, ...}`) and returns it with every option filled in.
  virtual Json resolve(const Json& spec, const ReadContext& ctx) const = 0;

 protected:
  /// The name part of a spec; fails with the known names when it is not registered.
  std::string spec_type(const Json& spec, const ReadContext& ctx) const;

 private:
  std::string kind_, doc_;
};

/// Every registry, by kind; throws InternalError for an unknown kind.
RegistryBase& registry_for_kind(const std::string& kind);
std::vector<RegistryBase*> all_registries();

/// Problems found while registering (duplicate names), reported by the app at start-up because
/// throwing during static initialisation would terminate the process.
std::vector<std::string>& registration_errors();

template <class Product, class... Args>
class Registry : public RegistryBase {
 public:
  using Create = std::function<std::unique_ptr<Product>(const Json& options, const ReadContext& ctx,
                                                        Args... args)>;
  struct Entry {
    std::string name, doc;
    std::function<Json(const Json& options, const ReadContext& ctx)> resolve_options;
    Create create;
    std::function<std::vector<FieldDoc>()> describe;
  };

  using RegistryBase::RegistryBase;

  /// Adds an entry; a name registered twice is an InternalError.
  void add(Entry entry) {
    if (entries_.count(entry.name))
      throw InternalError("duplicate " + kind() + " registration \"" + entry.name + "\"");
    std::string name = entry.name;
    entries_.emplace(std::move(name), std::move(entry));
  }

  /// Builds the component a resolved spec names. Whatever its constructor throws names the
  /// spec's config path (rethrow_at_config_path): a component reports its ConfigErrors relative
  /// to itself (`warmup`, `k`) and never needs to know where it was configured.
  std::unique_ptr<Product> create(const ComponentSpec& spec, Args... args) const {
    KILN_ASSERT(spec.kind == kind());
    try {
      return entries_.at(spec.type())
          .create(spec.options(), ReadContext{spec.path, nullptr}, std::forward<Args>(args)...);
    } catch (...) {
      rethrow_at_config_path(spec.path, kind());
    }
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }
  std::vector<ComponentDoc> documents() const override {
    std::vector<ComponentDoc> out;
    for (const auto& [name, entry] : entries_) out.push_back({name, entry.doc, entry.describe()});
    return out;
  }
  Json resolve(const Json& spec, const ReadContext& ctx) const override {
    std::string type = spec_type(spec, ctx);
    Json options = spec.is_object() ? spec : Json::object();
    options.erase("type");
    Json resolved = Json::object();
    resolved["type"] = type;
    // Named, not iterated as a temporary: items() would outlive the Json it points into.
    Json filled = entries_.at(type).resolve_options(options, ctx);
    for (auto& [key, value] : filled.items()) resolved[key] = value;
    return resolved;
  }

 private:
  std::map<std::string, Entry> entries_;
};

/// Registers `Class` (constructed as `Class(const Options&, Args...)`) under `name`.
template <class Class, class Options, class Product, class... Args>
bool register_component(Registry<Product, Args...>& registry, const char* name, const char* doc) {
  typename Registry<Product, Args...>::Entry entry;
  entry.name = name;
  entry.doc = doc;
  entry.resolve_options = [](const Json& options, const ReadContext& ctx) {
    Options parsed;
    read_options(parsed, options, ctx);
    return write_options(parsed);
  };
  entry.create = [](const Json& options, const ReadContext& ctx,
                    Args... args) -> std::unique_ptr<Product> {
    Options parsed;
    read_options(parsed, options, ctx);
    return std::make_unique<Class>(parsed, std::forward<Args>(args)...);
  };
  entry.describe = [] { return describe_options<Options>(); };
  try {
    registry.add(std::move(entry));
  } catch (const Error& e) {
    registration_errors().push_back(e.what());
  }
  return true;
}

/// A resolved component option; the kind set in the default decides the registry.
template <>
struct OptionTraits<ComponentSpec> {
  static void read(const Json& value, ComponentSpec& out, const ReadContext& ctx);
  static Json write(const ComponentSpec& value) { return value.spec; }
  static std::string type_name(const ComponentSpec& value) { return value.kind; }
};

template <>
struct OptionTraits<ComponentList> {
  static void read(const Json& value, ComponentList& out, const ReadContext& ctx);
  static Json write(const ComponentList& value);
  static std::string type_name(const ComponentList& value) { return "list of " + value.kind; }
};

template <>
struct OptionTraits<ComponentMap> {
  static void read(const Json& value, ComponentMap& out, const ReadContext& ctx);
  static Json write(const ComponentMap& value);
  static std::string type_name(const ComponentMap& value) {
    return "mapping of names to " + value.kind + "s";
  }
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

/// Registers a component: `registry` is the accessor function of its kind's registry. The flag's
/// name is unique per translation unit (__COUNTER__), so unity builds can join component files.
#define KILN_REGISTER(registry, name, Class, Options, doc)                        \
  [[maybe_unused]] static const bool KILN_CONCAT(kiln_registered_, __COUNTER__) = \
      ::kiln::register_component<Class, Options>(registry(), name, doc)
