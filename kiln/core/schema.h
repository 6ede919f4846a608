#pragma once
// Options reflection. Every component declares its options once, as a struct whose defaults are
// the member initialisers and whose describe(Schema&) names each field, documents it and states
// its checks (docs/design.md §3). One generic reader and writer work from that declaration: parse a
// config node with defaults filled in, reject unknown keys with a "did you mean", dump the resolved
// options, and document them for `kiln list`.
//
//   struct MlpOptions {
//     std::vector<int64_t> hidden = {256, 128};
//     void describe(Schema& s) { s.field("hidden", hidden, "Hidden widths.").each_min(1); }
//   };
//
// Thread-safety: a Schema is a short-lived, single-threaded view over one options struct.

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kiln/core/config_path.h"
#include "kiln/core/json.h"

namespace kiln {

/// Where a value being read sits in the config, for error messages.
struct ReadContext {
  std::string path;
  const Origins* origins = nullptr;

  ReadContext child(const std::string& key) const { return {child_path(path, key), origins}; }
  ReadContext at(size_t index) const { return {index_path(path, index), origins}; }
  /// Throws ConfigError at this path, naming the file the value came from.
  [[noreturn]] void fail(const std::string& problem) const;
};

/// One documented option, as `kiln list` and docs/config.md print it.
struct FieldDoc {
  std::string key, type, default_value, doc, constraint;
  std::vector<FieldDoc> children;  // fields of a nested mapping
};

class Schema;

template <class T, class = void>
struct HasDescribe : std::false_type {};
template <class T>
struct HasDescribe<T, std::void_t<decltype(std::declval<T&>().describe(std::declval<Schema&>()))>>
    : std::true_type {};

/// How a value type is read, written and named. Specialised per type below and in other headers
/// (Period, ComponentSpec); the primary template handles nested options structs.
template <class T, class = void>
struct OptionTraits;

/// An enum becomes an option type when a function `enum_names(E)` in its own namespace (found by
/// argument-dependent lookup, so an anonymous namespace does) gives the config name of each
/// value: read from one of the names (any other is a ConfigError listing them), written and
/// listed by name.
///
///   enum class OnNan { kStop, kSkipStep, kRewind };
///   inline EnumNameList<OnNan> enum_names(OnNan) {
///     return {{OnNan::kStop, "stop"}, {OnNan::kSkipStep, "skip_step"}, {OnNan::kRewind,
///     "rewind"}};
///   }
template <class E>
using EnumNameList = std::vector<std::pair<E, const char*>>;

template <class E, class = void>
struct HasEnumNames : std::false_type {};
template <class E>
struct HasEnumNames<E, std::enable_if_t<std::is_enum_v<E>, std::void_t<decltype(enum_names(E{}))>>>
    : std::true_type {};

/// The config name of an enum value.
template <class E>
std::string enum_name(E value) {
  for (const auto& [item, name] : enum_names(E{}))
    if (item == value) return name;
  return "unknown";
}

/// `expected one of "a", "b", got VALUE`.
std::string choice_problem(const std::vector<std::string>& choices, const Json& value);

/// Type-erased part of a declared field.
class FieldBase {
 public:
  FieldBase(std::string key, std::string doc) : key_(std::move(key)), doc_(std::move(doc)) {}
  virtual ~FieldBase() = default;
  virtual void read(const Json& value, const ReadContext& ctx) = 0;
  virtual Json write() const = 0;
  virtual FieldDoc document() const = 0;
  const std::string& key() const { return key_; }
  bool required() const { return required_; }

 protected:
  std::string key_, doc_;
  bool required_ = false;
};

/// A declared field of type T; the chained calls add checks to it.
template <class T>
class Field : public FieldBase {
 public:
  Field(std::string key, T& target, std::string doc)
      : FieldBase(std::move(key), std::move(doc)), target_(&target) {}

  /// Adds a check; `description` completes "expected <type> ..." in the error message.
  Field& check(std::function<bool(const T&)> ok, std::string description) {
    checks_.push_back({std::move(ok), std::move(description)});
    return *this;
  }
  Field& min(double lo) {
    return check([lo](const T& v) { return v >= lo; }, fmt::format(">= {}", lo));
  }
  Field& in_range(double lo, double hi) {
    return check([lo, hi](const T& v) { return v >= lo && v <= hi; },
                 fmt::format("in [{}, {}]", lo, hi));
  }
  Field& each_min(double lo) {
    return check(
        [lo](const T& list) {
          for (const auto& v : list)
            if (v < lo) return false;
          return true;
        },
        fmt::format("with every item >= {}", lo));
  }
  /// For an enum option: only these of its values are accepted, and listed (a network built for
  /// some of the activations).
  Field& only(const std::vector<T>& allowed) {
    for (const T& value : allowed) only_.push_back(enum_name(value));
    return *this;
  }
  /// The key must be given: the struct's default is only a placeholder.
  Field& require() {
    required_ = true;
    return *this;
  }

  void read(const Json& value, const ReadContext& ctx) override {
    bool allowed = only_.empty() ||
                   (value.is_string() &&
                    std::find(only_.begin(), only_.end(), value.get<std::string>()) != only_.end());
    if (!allowed) ctx.fail(choice_problem(only_, value));
    T parsed = *target_;
    OptionTraits<T>::read(value, parsed, ctx);
    for (const auto& c : checks_)
      if (!c.ok(parsed))
        ctx.fail(fmt::format("expected {} {}, got {}", OptionTraits<T>::type_name(*target_),
                             c.description, show_value(value)));
    *target_ = std::move(parsed);
  }
  Json write() const override { return OptionTraits<T>::write(*target_); }
  FieldDoc document() const override;

 private:
  struct Check {
    std::function<bool(const T&)> ok;
    std::string description;
  };
  T* target_;
  std::vector<Check> checks_;
  std::vector<std::string> only_;  // the names only() allows; empty: all
};

/// The list of fields an options struct declares in its describe().
class Schema {
 public:
  template <class T>
  Field<T>& field(std::string key, T& target, std::string doc) {
    fields_.push_back(std::make_unique<Field<T>>(std::move(key), target, std::move(doc)));
    return static_cast<Field<T>&>(*fields_.back());
  }
  const std::vector<std::unique_ptr<FieldBase>>& fields() const { return fields_; }

 private:
  std::vector<std::unique_ptr<FieldBase>> fields_;
};

/// Reads `node` (a mapping, or null for all defaults) into the declared fields. Absent keys keep
/// their defaults, which are read back through the same path so that nested components resolve.
void read_fields(const Schema& schema, const Json& node, const ReadContext& ctx);
Json write_fields(const Schema& schema);
std::vector<FieldDoc> document_fields(const Schema& schema);

template <class Options>
void read_options(Options& options, const Json& node, const ReadContext& ctx) {
  Schema schema;
  options.describe(schema);
  read_fields(schema, node, ctx);
}

template <class Options>
Json write_options(const Options& options) {
  Options copy = options;  // describe() binds non-const references
  Schema schema;
  copy.describe(schema);
  return write_fields(schema);
}

template <class Options>
std::vector<FieldDoc> describe_options() {
  Options defaults;
  Schema schema;
  defaults.describe(schema);
  return document_fields(schema);
}

/// For components with nothing to configure.
struct NoOptions {
  void describe(Schema&) {}
};

// ---- value types ----------------------------------------------------------------------------

template <class T>
struct OptionTraits<T, std::enable_if_t<HasDescribe<T>::value>> {
  static void read(const Json& value, T& out, const ReadContext& ctx) {
    if (!value.is_object() && !value.is_null())
      ctx.fail("expected a mapping of keys to values, got " + show_value(value));
    read_options(out, value, ctx);
  }
  static Json write(const T& value) { return write_options(value); }
  static std::string type_name(const T&) { return "mapping"; }
  static std::vector<FieldDoc> children(const T&) { return describe_options<T>(); }
};

template <>
struct OptionTraits<bool> {
  static void read(const Json& value, bool& out, const ReadContext& ctx);
  static Json write(bool value) { return value; }
  static std::string type_name(bool) { return "boolean"; }
};

template <class T>
struct OptionTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void read(const Json& value, T& out, const ReadContext& ctx) {
    bool fits =
        value.is_number_integer() &&
        (value.is_number_unsigned()
             ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
             : value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                   value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    if (!fits) ctx.fail("expected integer, got " + show_value(value));
    out = value.get<T>();
  }
  static Json write(T value) { return value; }
  static std::string type_name(T) { return "integer"; }
};

template <>
struct OptionTraits<double> {
  static void read(const Json& value, double& out, const ReadContext& ctx);
  static Json write(double value) { return value; }
  static std::string type_name(double) { return "number"; }
};

template <>
struct OptionTraits<std::string> {
  static void read(const Json& value, std::string& out, const ReadContext& ctx);
  static Json write(const std::string& value) { return value; }
  static std::string type_name(const std::string&) { return "string"; }
};

/// Any JSON value, kept as is (for options whose shape the component checks itself).
template <>
struct OptionTraits<Json> {
  static void read(const Json& value, Json& out, const ReadContext&) { out = value; }
  static Json write(const Json& value) { return value; }
  static std::string type_name(const Json&) { return "any"; }
};

/// An option that may be absent: null (or no key) is none.
template <class T>
struct OptionTraits<std::optional<T>> {
  static void read(const Json& value, std::optional<T>& out, const ReadContext& ctx) {
    if (value.is_null()) {
      out.reset();
      return;
    }
    T item{};
    OptionTraits<T>::read(value, item, ctx);
    out = std::move(item);
  }
  static Json write(const std::optional<T>& value) {
    return value ? OptionTraits<T>::write(*value) : Json();
  }
  static std::string type_name(const std::optional<T>&) {
    return OptionTraits<T>::type_name(T{}) + " | null";
  }
};

/// Lists; a single scalar where a list is expected is read as a one-item list.
template <class T>
struct OptionTraits<std::vector<T>> {
  static void read(const Json& value, std::vector<T>& out, const ReadContext& ctx) {
    std::vector<T> items;
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        items.emplace_back();
        OptionTraits<T>::read(value[i], items.back(), ctx.at(i));
      }
    } else {
      items.emplace_back();
      OptionTraits<T>::read(value, items.back(), ctx);
    }
    out = std::move(items);
  }
  static Json write(const std::vector<T>& list) {
    Json out = Json::array();
    for (const auto& item : list) out.push_back(OptionTraits<T>::write(item));
    return out;
  }
  static std::string type_name(const std::vector<T>&) {
    return "list of " + OptionTraits<T>::type_name(T{});
  }
};

/// Mappings from names the user chooses to values (`features: {image: {...}, label: {...}}`).
template <class T>
struct OptionTraits<std::map<std::string, T>> {
  static void read(const Json& value, std::map<std::string, T>& out, const ReadContext& ctx) {
    if (!value.is_object() && !value.is_null())
      ctx.fail("expected a mapping of names to values, got " + show_value(value));
    std::map<std::string, T> items;
    if (value.is_object())
      for (const auto& [key, item] : value.items())
        OptionTraits<T>::read(item, items[key], ctx.child(key));
    out = std::move(items);
  }
  static Json write(const std::map<std::string, T>& map) {
    Json out = Json::object();
    for (const auto& [key, item] : map) out[key] = OptionTraits<T>::write(item);
    return out;
  }
  static std::string type_name(const std::map<std::string, T>&) {
    return "mapping of name to " + OptionTraits<T>::type_name(T{});
  }
};

template <class E>
struct OptionTraits<E, std::enable_if_t<HasEnumNames<E>::value>> {
  static void read(const Json& value, E& out, const ReadContext& ctx) {
    if (value.is_string())
      for (const auto& [item, name] : enum_names(E{}))
        if (value.get<std::string>() == name) {
          out = item;
          return;
        }
    ctx.fail(choice_problem(choices(out), value));
  }
  static Json write(E value) { return enum_name(value); }
  static std::string type_name(E) { return "string"; }
  static std::vector<std::string> choices(E) {
    std::vector<std::string> names;
    for (const auto& [item, name] : enum_names(E{})) names.push_back(name);
    return names;
  }
};

template <class T, class = void>
struct HasChoices : std::false_type {};
template <class T>
struct HasChoices<T, std::void_t<decltype(OptionTraits<T>::choices(std::declval<const T&>()))>>
    : std::true_type {};

template <class T, class = void>
struct HasChildren : std::false_type {};
template <class T>
struct HasChildren<T, std::void_t<decltype(OptionTraits<T>::children(std::declval<const T&>()))>>
    : std::true_type {};

template <class T>
FieldDoc Field<T>::document() const {
  FieldDoc doc{key_, OptionTraits<T>::type_name(*target_), write().dump(), doc_, "", {}};
  if constexpr (HasChoices<T>::value) {
    doc.constraint = "one of:";
    std::vector<std::string> names = only_;
    if (names.empty()) names = OptionTraits<T>::choices(*target_);
    for (const auto& name : names) doc.constraint += " " + name;
  }
  for (const auto& c : checks_)
    doc.constraint += (doc.constraint.empty() ? "" : ", ") + c.description;
  if (required_) doc.default_value = "required";
  if constexpr (HasChildren<T>::value) doc.children = OptionTraits<T>::children(*target_);
  return doc;
}

}  // namespace kiln
