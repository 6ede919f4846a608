#include "kiln/tabular/feature_columns.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"
#include "kiln/tabular/parallel_pass.h"

namespace kiln::tabular {
namespace {

constexpr const char* kFormat = "kiln.preprocessing";

// preprocessing.json comes from disk (a run, an export): a malformed one is a ConfigError naming
// what is wrong, never a JSON library exception.
[[noreturn]] void malformed(const std::string& problem) {
  throw ConfigError("preprocessing.json", "", problem);
}

std::string column_name(const Json& column, size_t index) {
  if (!column.is_object() || !column.contains("name") || !column["name"].is_string())
    malformed("columns[" + std::to_string(index) + "] has no \"name\" string");
  if (!column.contains("spec"))
    malformed("column \"" + column["name"].get<std::string>() + "\" has no \"spec\"");
  return column["name"].get<std::string>();
}

// The groups preprocessing.json stores under "inputs" (written since named inputs exist); one
// unnamed group of every column when it has none.
InputGroups saved_groups(const Json& preprocessing, const std::vector<std::string>& columns) {
  if (!preprocessing.contains("inputs") || preprocessing["inputs"].is_null())
    return InputGroups(columns);
  InputGroups groups;
  try {
    OptionTraits<InputGroups>::read(preprocessing["inputs"], groups,
                                    ReadContext{"preprocessing.json:inputs", nullptr});
  } catch (const ConfigError& e) {
    malformed(e.problem());
  }
  return groups;
}

// The statistics each column gathers in one part of the pass (null: it needs none).
using PartStatistics = std::vector<std::unique_ptr<ColumnStatistics>>;

}  // namespace

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

FeatureColumns::FeatureColumns(const ComponentMap& declared, const InputGroups& input,
                               const std::string& input_path, const std::string& declared_path)
    : groups_(input) {
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
  measure();
}

std::unique_ptr<FeatureColumns> FeatureColumns::from_preprocessing(const Json& preprocessing) {
  if (!preprocessing.is_object() || !preprocessing.contains("format") ||
      preprocessing["format"] != kFormat || !preprocessing.contains("columns") ||
      !preprocessing["columns"].is_array())
    throw ConfigError("preprocessing.json", "",
                      std::string("not a kiln preprocessing file (\"format\": \"") + kFormat +
                          "\" with \"columns\")");
  std::unique_ptr<FeatureColumns> made(new FeatureColumns());
  const Json& columns = preprocessing["columns"];
  std::vector<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string name = column_name(columns[i], i);
    ComponentSpec spec("column");
    spec.path = "preprocessing.json:" + name;
    spec.spec = column_registry().resolve(columns[i]["spec"], ReadContext{spec.path, nullptr});
    made->add(name, std::move(spec));
    names.push_back(name);
  }
  made->groups_ = saved_groups(preprocessing, names);
  made->restore(preprocessing);
  return made;
}

void FeatureColumns::add(const std::string& name, ComponentSpec spec) {
  columns_.push_back(column_registry().create(spec, name));
  names_.push_back(name);
  specs_.push_back(std::move(spec));
}

void FeatureColumns::measure() {
  width_ = 0;
  for (const auto& column : columns_) width_ += column->width();
}

bool FeatureColumns::needs_fitting() const {
  return std::any_of(columns_.begin(), columns_.end(),
                     [](const auto& column) { return column->statistics() != nullptr; });
}

void FeatureColumns::fit(const TabularSource& train, int64_t threads) {
  std::vector<PartStatistics> gathered = gather_parts<PartStatistics>(
      train, threads,
      [&] {
        PartStatistics part;
        for (const auto& column : columns_) part.push_back(column->statistics());
        return part;
      },
      [](PartStatistics& part, const io::Features& features, const io::RecordLocation& where) {
        for (auto& statistics : part)
          if (statistics) statistics->add(features, where);
      });
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (!gathered[0][c]) continue;
    for (size_t p = 1; p < gathered.size(); ++p) gathered[0][c]->merge(*gathered[p][c]);
    try {
      columns_[c]->fit(*gathered[0][c]);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      throw ConfigError(specs_[c].path, "", e.what());
    }
  }
  measure();
}

Json FeatureColumns::preprocessing() const {
  Json columns = Json::array();
  for (size_t c = 0; c < columns_.size(); ++c)
    columns.push_back({{"name", names_[c]},
                       {"spec", specs_[c].spec},
                       {"fitted", columns_[c]->fitted()},
                       {"width", columns_[c]->width()}});
  Json made = {{"format", kFormat}, {"version", 1}, {"columns", columns}, {"width", width_}};
  if (groups_.named) made["inputs"] = groups_.json();
  return made;
}

void FeatureColumns::restore(const Json& preprocessing) {
  if (!preprocessing.is_object() || !preprocessing.contains("columns") ||
      !preprocessing["columns"].is_array())
    malformed("expected an object with a \"columns\" list");
  const Json& columns = preprocessing["columns"];
  auto names_there = [&] {
    std::vector<std::string> names;
    for (size_t i = 0; i < columns.size(); ++i) names.push_back(column_name(columns[i], i));
    return names;
  };
  if (names_there() != names_)
    throw ConfigError("preprocessing.json", "",
                      fmt::format("its columns [{}] are not the input's [{}]",
                                  fmt::join(names_there(), ", "), fmt::join(names_, ", ")));
  if (saved_groups(preprocessing, names_) != groups_)
    throw ConfigError("preprocessing.json", "",
                      "its inputs " + show_value(saved_groups(preprocessing, names_).json()) +
                          " are not the config's " + show_value(groups_.json()));
  for (size_t c = 0; c < columns_.size(); ++c) {
    std::string path = "preprocessing.json:" + names_[c];
    // Both resolved (every option filled in), so that a file written by hand compares too.
    Json theirs = column_registry().resolve(columns[c]["spec"], ReadContext{path, nullptr});
    if (theirs != specs_[c].spec)
      throw ConfigError(specs_[c].path, "",
                        "the column differs from the one the run was fitted with (" +
                            theirs.dump() + "); start a new run to change it");
    columns_[c]->restore(columns[c].value("fitted", Json()), path);
  }
  measure();
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
