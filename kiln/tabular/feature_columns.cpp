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

// The statistics each column gathers in one part of the pass (null: it needs none).
using PartStatistics = std::vector<std::unique_ptr<ColumnStatistics>>;

}  // namespace

FeatureColumns::FeatureColumns(const ComponentMap& declared, const std::vector<std::string>& input,
                               const std::string& input_path, const std::string& declared_path) {
  std::set<std::string> listed;
  for (size_t i = 0; i < input.size(); ++i) {
    const std::string& name = input[i];
    if (!listed.insert(name).second)
      throw ConfigError(index_path(input_path, i), "", "\"" + name + "\" is listed twice");
    auto found = declared.items.find(name);
    if (found != declared.items.end()) {
      add(name, found->second);
      continue;
    }
    ComponentSpec plain("column");
    plain.path = index_path(input_path, i);
    plain.spec = column_registry().resolve(Json("numeric"), ReadContext{plain.path, nullptr});
    add(name, std::move(plain));
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
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string name = column_name(columns[i], i);
    ComponentSpec spec("column");
    spec.path = "preprocessing.json:" + name;
    spec.spec = column_registry().resolve(columns[i]["spec"], ReadContext{spec.path, nullptr});
    made->add(name, std::move(spec));
  }
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
  return {{"format", kFormat}, {"version", 1}, {"columns", columns}, {"width", width_}};
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
