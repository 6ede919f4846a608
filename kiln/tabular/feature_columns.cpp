#include "kiln/tabular/feature_columns.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"

namespace kiln::tabular {

InputGroups::InputGroups(std::vector<std::string> columns) {
  groups.emplace_back("input", std::move(columns));
}

std::vector<std::string> InputGroups::columns() const {
  std::vector<std::string> all;
  for (const auto& group : groups) all.insert(all.end(), group.second.begin(), group.second.end());
  return all;
}

Json InputGroups::json() const {
  if (!named) return nullptr;
  Json parts = Json::object();
  for (const auto& [name, columns] : groups) parts[name] = columns;
  return parts;
}

InputGroups input_groups(const std::vector<std::string>& input, const InputGroups& inputs) {
  if (inputs.empty()) return InputGroups(input);
  if (!input.empty())
    throw ConfigError("inputs", "", "give input (one vector) or inputs (named parts), not both");
  return inputs;
}

FeatureColumns::FeatureColumns(const ComponentMap& declared, const InputGroups& input,
                               const std::string& input_path, const std::string& declared_path,
                               DerivedFeatures derived)
    : groups_(input), derived_(std::move(derived)) {
  std::map<std::string, std::string> listed;  // column -> where
  for (const auto& [group, columns] : input.groups) {
    std::string group_path = input.named ? child_path(input_path, group) : input_path;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& name = columns[i];
      std::string path = index_path(group_path, i);
      if (auto [first, fresh] = listed.emplace(name, path); !fresh)
        throw ConfigError(path, "",
                          "\"" + name + "\" is listed twice (first at " + first->second +
                              "); to use a feature twice, declare a second column reading it "
                              "(feature: " +
                              name + ")");
      auto found = declared.items.find(name);
      if (found != declared.items.end()) {
        add(name, found->second);
        continue;
      }
      ComponentSpec plain("column");
      plain.path = path;
      plain.spec = column_registry().resolve(Json("numeric"), ReadContext{plain.path, nullptr});
      add(name, std::move(plain));
    }
  }
  for (const auto& [name, spec] : declared.items)
    if (!listed.count(name))
      throw ConfigError(
          child_path(declared_path, name), "",
          "the column is not in the model's input; list it in " + input_path + ", or remove it");
  link();
  measure();
  derived_inputs_ = derived_.needed_for(features());
}

void FeatureColumns::add(const std::string& name, ComponentSpec spec, const Json& built_from) {
  ComponentSpec built = spec;
  if (!built_from.is_null()) built.spec = built_from;
  columns_.push_back(column_registry().create(built, name));
  names_.push_back(name);
  specs_.push_back(std::move(spec));
}

void FeatureColumns::link() {
  std::unordered_map<std::string, size_t> place;  // the first of a name, as a search finds
  for (size_t c = 0; c < names_.size(); ++c) place.emplace(names_[c], c);
  auto column_named = [&](const std::string& name) -> const FeatureColumn* {
    auto found = place.find(name);
    return found == place.end() ? nullptr : columns_[found->second].get();
  };
  for (size_t c = 0; c < columns_.size(); ++c) columns_[c]->link(column_named, specs_[c].path);
}

void FeatureColumns::measure() {
  width_ = 0;
  for (const auto& column : columns_) width_ += column->width();
}

bool FeatureColumns::needs_fitting() const {
  return std::any_of(columns_.begin(), columns_.end(),
                     [](const auto& column) { return column->statistics() != nullptr; });
}

void RowsOf::visit(int64_t begin, int64_t end, const RowVisitor& visit) const {
  for (int64_t i = begin; i < end; ++i)
    source_.visit(rows_[size_t(i)], rows_[size_t(i)] + 1,
                  [&](int64_t, const io::Features& features, const io::RecordLocation& where) {
                    visit(i, features, where);
                  });
}

void RefusedRows::add(int64_t row, const std::string& problem) {
  if (rows.empty()) first_problem = problem;
  rows.push_back(row);
}

void RefusedRows::merge(const RefusedRows& later) {
  if (rows.empty()) first_problem = later.first_problem;
  rows.insert(rows.end(), later.rows.begin(), later.rows.end());
}

InputLayout FeatureColumns::layout() const {
  InputLayout layout;
  int64_t position = 0;
  size_t c = 0;
  for (const auto& [group, columns] : groups_.groups) {
    InputPart part{group, position, 0};
    for (size_t i = 0; i < columns.size(); ++i, ++c) {
      if (int64_t cardinality = columns_[c]->cardinality())
        layout.indices.push_back({names_[c], position, cardinality, columns_[c]->embedding_dim()});
      position += columns_[c]->width();
    }
    part.width = position - part.offset;
    if (groups_.named) layout.parts.push_back(std::move(part));
  }
  return layout;
}

std::vector<std::string> FeatureColumns::raw_features() const {
  std::vector<std::string> raw, names = derived_inputs_.names();
  std::unordered_set<std::string> derived(names.begin(), names.end()), kept;
  for (const std::string& feature : features())
    if (!derived.count(feature) && kept.insert(feature).second) raw.push_back(feature);
  for (const std::string& feature : derived_inputs_.features())
    if (kept.insert(feature).second) raw.push_back(feature);
  return raw;
}

std::vector<std::string> FeatureColumns::features() const {
  std::set<std::string> all;
  for (const auto& column : columns_)
    for (const auto& feature : column->features()) all.insert(feature);
  return {all.begin(), all.end()};
}

void FeatureColumns::write(const io::Features& features, const io::RecordLocation& where,
                           float* row) const {
  for (const auto& column : columns_) {
    column->write(features, where, row);
    row += column->width();
  }
}

std::map<std::string, int64_t> FeatureColumns::unseen() const {
  std::map<std::string, int64_t> counts;
  for (size_t c = 0; c < columns_.size(); ++c)
    if (int64_t n = columns_[c]->unseen()) counts[names_[c]] = n;
  return counts;
}

std::map<std::string, int64_t> FeatureColumns::unseen(const UnseenCounts& counts) const {
  std::map<std::string, int64_t> by_name;
  for (size_t c = 0; c < columns_.size(); ++c)
    if (int64_t n = counts.of(columns_[c].get())) by_name[names_[c]] = n;
  return by_name;
}

}  // namespace kiln::tabular

namespace kiln {

void OptionTraits<tabular::InputGroups>::read(const Json& value, tabular::InputGroups& out,
                                              const ReadContext& ctx) {
  const char* expected =
      "expected a mapping of input names to lists of columns, e.g. "
      "{wide: [a, a_x_b], deep: [b, c]}";
  if (!value.is_object()) ctx.fail(std::string(expected) + ", got " + show_value(value));
  tabular::InputGroups groups;
  groups.named = !value.empty();
  for (const auto& [name, columns] : value.items()) {
    ReadContext at = ctx.child(name);
    if (!columns.is_array() || columns.empty())
      at.fail("expected a non-empty list of columns, got " + show_value(columns));
    std::vector<std::string> names;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (!columns[i].is_string() || columns[i].get<std::string>().empty())
        at.at(i).fail("expected a column name, got " + show_value(columns[i]));
      names.push_back(columns[i].get<std::string>());
    }
    groups.groups.emplace_back(name, std::move(names));
  }
  out = std::move(groups);
}

}  // namespace kiln
