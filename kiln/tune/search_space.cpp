#include "kiln/tune/search_space.h"

#include <fmt/format.h>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"

namespace kiln::tune {
namespace {

// `when: {PARAMETER: VALUE}` or `{PARAMETER: [VALUE, ...]}`, on an earlier choice.
Condition read_condition(const Json& when, const std::vector<Parameter>& earlier,
                         const ReadContext& ctx) {
  if (!when.is_object() || when.size() != 1)
    ctx.fail("expected {PARAMETER: VALUE} or {PARAMETER: [VALUES]} naming an earlier choice, got " +
             show_value(when));
  Condition condition{when.begin().key(), {}};
  const Json& values = when.begin().value();
  condition.values =
      values.is_array() ? values.get<std::vector<Json>>() : std::vector<Json>{values};
  const Parameter* parent = nullptr;
  for (const Parameter& p : earlier)
    if (p.name == condition.parameter) parent = &p;
  if (!parent || parent->distribution->choices() == 0) {
    std::vector<std::string> choices;
    for (const Parameter& p : earlier)
      if (p.distribution->choices() > 0) choices.push_back(p.name);
    ctx.fail(fmt::format("\"{}\" is not a choice written above this parameter; choices above: {}",
                         condition.parameter,
                         choices.empty() ? "none" : fmt::format("{}", fmt::join(choices, ", "))));
  }
  for (const Json& value : condition.values) {
    bool possible = false;
    for (double c : parent->distribution->grid(0))
      possible = possible || Condition{"", {value}}.holds(parent->distribution->value(c));
    if (!possible)
      ctx.fail(fmt::format("{} is none of the values of the choice {}", show_value(value),
                           condition.parameter));
  }
  return condition;
}

Parameter read_parameter(const std::string& name, const Json& entry,
                         const std::vector<Parameter>& earlier, const ReadContext& ctx) {
  parse_config_path(name);  // a malformed path fails here, naming it
  Parameter parameter;
  parameter.name = name;
  Json spec = entry;
  if (spec.is_object() && spec.contains("when")) {
    spec.erase("when");
    parameter.when = read_condition(entry.at("when"), earlier, ctx.child("when"));
  }
  parameter.spec.spec = distribution_registry().resolve(spec, ctx);
  parameter.spec.path = ctx.path;
  try {
    parameter.distribution = distribution_registry().create(parameter.spec);
  } catch (const ConfigError& e) {
    // Its range checks know the option, not the file: name the file the space came from.
    if (!e.origin().empty()) throw;
    ReadContext{e.path(), ctx.origins}.fail(e.problem());
  }
  return parameter;
}

}  // namespace

bool Condition::holds(const Json& chosen) const {
  for (const Json& value : values) {
    if (chosen == value) return true;
    if (value.is_string() && chosen.is_object() && chosen.value("type", Json()) == value)
      return true;
  }
  return false;
}

SearchSpace SearchSpace::read(const Json& space, const ReadContext& ctx) {
  if (!space.is_object())
    ctx.fail(
        "expected a mapping of config paths to distributions, e.g. {optimizer.lr: {type: "
        "loguniform, low: 1.0e-4, high: 0.1}}, got " +
        show_value(space));
  SearchSpace out;
  for (const auto& [name, entry] : space.items())
    out.parameters_.push_back(read_parameter(name, entry, out.parameters_, ctx.child(name)));
  return out;
}

const Parameter& SearchSpace::at(const std::string& name) const {
  for (const Parameter& p : parameters_)
    if (p.name == name) return p;
  throw InternalError("no tuned parameter " + name);
}

bool SearchSpace::active(const Parameter& parameter, const Assignment& so_far) const {
  if (!parameter.when) return true;
  auto parent = so_far.find(parameter.when->parameter);
  if (parent == so_far.end()) return false;
  return parameter.when->holds(at(parent->first).distribution->value(parent->second));
}

Json SearchSpace::values(const Assignment& assignment) const {
  Json out = Json::object();
  for (const Parameter& p : parameters_) {
    auto found = assignment.find(p.name);
    if (found != assignment.end()) out[p.name] = p.distribution->value(found->second);
  }
  return out;
}

std::optional<Assignment> SearchSpace::assignment_of(const Json& values) const {
  Assignment out;
  for (const Parameter& p : parameters_) {
    bool given = values.is_object() && values.contains(p.name);
    if (given != active(p, out)) return std::nullopt;
    if (!given) continue;
    std::optional<double> coordinate = p.distribution->coordinate(values.at(p.name));
    if (!coordinate) return std::nullopt;
    out[p.name] = *coordinate;
  }
  return out;
}

void SearchSpace::apply(const Assignment& assignment, RawConfig& config,
                        const std::string& origin) const {
  for (const Parameter& p : parameters_) {
    auto found = assignment.find(p.name);
    if (found != assignment.end())
      set_config_value(config, p.name, p.distribution->value(found->second), origin);
  }
}

std::vector<std::vector<const Parameter*>> SearchSpace::groups() const {
  std::vector<std::vector<const Parameter*>> out;
  std::vector<const Condition*> keys;
  for (const Parameter& p : parameters_) {
    size_t i = 0;
    for (; i < keys.size(); ++i) {
      bool same =
          (!keys[i] && !p.when) || (keys[i] && p.when && keys[i]->parameter == p.when->parameter &&
                                    keys[i]->values == p.when->values);
      if (same) break;
    }
    if (i == keys.size()) {
      keys.push_back(p.when ? &*p.when : nullptr);
      out.emplace_back();
    }
    out[i].push_back(&p);
  }
  return out;
}

}  // namespace kiln::tune

namespace kiln {
Json OptionTraits<tune::SearchSpace>::write(const tune::SearchSpace& value) {
  Json out = Json::object();
  for (const tune::Parameter& p : value.parameters()) {
    Json entry = p.spec.spec;
    if (p.when) {
      Json values = p.when->values.size() == 1 ? p.when->values[0] : Json(p.when->values);
      entry["when"] = Json{{p.when->parameter, values}};
    }
    out[p.name] = entry;
  }
  return out;
}
}  // namespace kiln
