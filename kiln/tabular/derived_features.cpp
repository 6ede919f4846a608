#include "kiln/tabular/derived_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/core/schema.h"

namespace kiln::tabular {

DerivedFeatures::DerivedFeatures(const std::vector<std::pair<std::string, std::string>>& specs,
                                 const std::string& path) {
  // Each name's place, hashed: a preprocessing.json of 100,000 derived features searched a list
  // for each name an expression reads.
  std::unordered_map<std::string, size_t> place;
  for (size_t i = 0; i < specs.size(); ++i)
    if (!place.emplace(specs[i].first, i).second)
      throw ConfigError(child_path(path, specs[i].first), "", "the derived feature is named twice");
  for (size_t i = 0; i < specs.size(); ++i) {
    const auto& [name, text] = specs[i];
    std::string at = child_path(path, name);
    if (name.empty()) throw ConfigError(path, "", "a derived feature needs a name");
    Expression expression(text, at);
    // Its own name reads the raw feature it is to replace (fare: "clip(fare, 0, 500)").
    for (const std::string& read : expression.features())
      if (auto found = place.find(read); found != place.end() && found->second > i)
        throw ConfigError(at, "",
                          fmt::format("expression \"{}\" reads {}, which is derived below it: "
                                      "an expression reads the raw features and the derived "
                                      "features above it",
                                      text, read));
    derived_.emplace_back(name, std::move(expression));
  }
}

DerivedFeatures DerivedFeatures::from_json(const Json& derived, const std::string& path) {
  if (derived.is_null()) return {};
  if (!derived.is_object())
    throw ConfigError(path, "", "expected a mapping of derived features to expressions");
  std::vector<std::pair<std::string, std::string>> specs;
  for (const auto& [name, text] : derived.items()) {
    if (!text.is_string())
      throw ConfigError(child_path(path, name), "", "expected an expression, as text");
    specs.emplace_back(name, text.get<std::string>());
  }
  return DerivedFeatures(specs, path);
}

void DerivedFeatures::apply(io::Features& features, const io::RecordLocation& where) const {
  // Assigned, never erased: a reader may hold pointers into the map (the csv dataset does).
  for (const auto& [name, expression] : derived_)
    features[name] = feature_of(expression.evaluate(features, where));
}

Json DerivedFeatures::json() const {
  Json derived = Json::object();
  for (const auto& [name, expression] : derived_)
    append_new_key(derived, name, expression.text());  // names are unique (the constructor)
  return derived;
}

std::vector<std::string> DerivedFeatures::names() const {
  std::vector<std::string> names;
  for (const auto& entry : derived_) names.push_back(entry.first);
  return names;
}

std::vector<std::string> DerivedFeatures::features() const {
  // A name is raw where it is read above its own derivation: `fare: "clip(fare, 0, 500)"` reads
  // the raw fare, which a served request must still bring.
  std::vector<std::string> raw;
  std::unordered_set<std::string> derived_above, seen;
  for (const auto& [name, expression] : derived_) {
    for (const std::string& read : expression.features())
      if (!derived_above.count(read) && seen.insert(read).second) raw.push_back(read);
    derived_above.insert(name);
  }
  return raw;
}

DerivedFeatures DerivedFeatures::needed_for(const std::vector<std::string>& wanted) const {
  std::unordered_set<std::string> needed(wanted.begin(), wanted.end());
  std::vector<bool> kept(derived_.size(), false);
  // From the last up: an expression needed makes the features it reads needed.
  for (size_t i = derived_.size(); i-- > 0;) {
    const auto& [name, expression] = derived_[i];
    if (!needed.count(name)) continue;
    kept[i] = true;
    needed.insert(expression.features().begin(), expression.features().end());
  }
  DerivedFeatures pruned;
  for (size_t i = 0; i < derived_.size(); ++i)
    if (kept[i]) pruned.derived_.push_back(derived_[i]);
  return pruned;
}

io::Feature feature_of(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kMissing:
      return {};
    case Value::Kind::kText:
      return io::bytes_feature({value.text});
    case Value::Kind::kNumber:
      break;
  }
  if (value.whole && std::abs(value.number) <= 9007199254740992.0)  // 2^53: exact in a double
    return io::int64_feature({static_cast<int64_t>(value.number)});
  return io::float_feature({static_cast<float>(value.number)});
}

}  // namespace kiln::tabular

namespace kiln {

void OptionTraits<tabular::DerivedFeatures>::read(const Json& value, tabular::DerivedFeatures& out,
                                                  const ReadContext& ctx) {
  if (!value.is_object())
    ctx.fail(
        "expected a mapping of feature names to expressions, e.g. {big_tipper: \"tips > "
        "0.2 * fare\"}, got " +
        show_value(value));
  for (const auto& [name, text] : value.items())
    if (!text.is_string())
      ctx.child(name).fail("expected an expression (text), got " + show_value(text));
  try {
    out = tabular::DerivedFeatures::from_json(value, ctx.path);
  } catch (const ConfigError& e) {
    ReadContext{e.path(), ctx.origins}.fail(e.problem());  // naming the file it came from
  }
}

}  // namespace kiln
