#include "kiln/tabular/feature_columns.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
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
  if (!column.is_object() || !column.contains("name") || !column["name"].is_string() ||
      column["name"].get<std::string>().empty())
    malformed("columns[" + std::to_string(index) + "] has no \"name\" string (not empty)");
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
  if (groups.columns() != columns)
    malformed("its \"inputs\" do not list its columns, in their order");
  return groups;
}

// A column's spec with the vocabulary it fitted in place of the vocabulary_file it was read from:
// preprocessing.json holds the words, so a run opened elsewhere (an export on a server) needs
// no copy of the file. Null when there is nothing to replace (the column is built from its spec).
Json without_files(const Json& column) {
  const Json& spec = column["spec"];
  const Json& fitted = column.value("fitted", Json());
  if (!spec.is_object() || !spec.value("vocabulary_file", Json("")).is_string() ||
      spec.value("vocabulary_file", std::string()).empty() || !fitted.is_object() ||
      !fitted.contains("vocabulary"))
    return nullptr;
  Json built = spec;
  built["vocabulary_file"] = "";
  built["vocabulary"] = fitted["vocabulary"];
  return built;
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

InputGroups input_groups(const std::vector<std::string>& input, const InputGroups& inputs) {
  if (inputs.empty()) return InputGroups(input);
  if (!input.empty())
    throw ConfigError("inputs", "", "give input (one vector) or inputs (named parts), not both");
  return inputs;
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
  link();
  measure();
}

std::unique_ptr<FeatureColumns> FeatureColumns::from_preprocessing(const Json& preprocessing) {
  if (!preprocessing.is_object() || !preprocessing.contains("format") ||
      preprocessing["format"] != kFormat || !preprocessing.contains("columns") ||
      !preprocessing["columns"].is_array())
    throw ConfigError("preprocessing.json", "",
                      std::string("not a kiln preprocessing file (\"format\": \"") + kFormat +
                          "\" with \"columns\")");
  const Json& version = preprocessing.value("version", Json());
  if (!version.is_number_integer() || version.get<int64_t>() != 1)
    malformed("its \"version\" is " + show_value(version) + "; this kiln reads version 1");
  std::unique_ptr<FeatureColumns> made(new FeatureColumns());
  const Json& columns = preprocessing["columns"];
  std::vector<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string name = column_name(columns[i], i);
    if (std::find(names.begin(), names.end(), name) != names.end())
      malformed("the column \"" + name + "\" is listed twice");
    ComponentSpec spec("column");
    spec.path = "preprocessing.json:" + name;
    spec.spec = column_registry().resolve(columns[i]["spec"], ReadContext{spec.path, nullptr});
    made->add(name, std::move(spec), without_files(columns[i]));
    names.push_back(name);
  }
  made->groups_ = saved_groups(preprocessing, names);
  made->link();
  made->restore(preprocessing);
  // The widths it states are what its columns write: a row of another width would be read as
  // the wrong features.
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].value("width", Json()) != made->columns_[i]->width())
      malformed(fmt::format("column \"{}\" says width {}, but it writes {}", names[i],
                            show_value(columns[i].value("width", Json())),
                            made->columns_[i]->width()));
  if (preprocessing.value("width", Json()) != made->width_)
    malformed(fmt::format("its \"width\" is {}, but its columns write {}",
                          show_value(preprocessing.value("width", Json())), made->width_));
  made->check_fitted_features(preprocessing.value("features", Json()));
  return made;
}

// The raw features the columns were fitted on (written since 2026-11-28; older files have none):
// a column reading another, a cross edited to name a feature training never read, would write
// rows of values the model never saw.
void FeatureColumns::check_fitted_features(const Json& fitted) const {
  if (fitted.is_null()) return;
  bool names = fitted.is_array();
  for (size_t i = 0; names && i < fitted.size(); ++i) names = fitted[i].is_string();
  if (!names) malformed("its \"features\" is not a list of feature names");
  std::set<std::string> known(fitted.begin(), fitted.end());
  for (size_t c = 0; c < columns_.size(); ++c)
    for (const std::string& feature : columns_[c]->features())
      if (!known.count(feature))
        malformed(
            fmt::format("column \"{}\" reads the feature \"{}\", which is not one of "
                        "the features its columns were fitted on: {}",
                        names_[c], feature, show_value(fitted)));
  if (known.size() != features().size())
    malformed(fmt::format("its \"features\" {} are not the ones its columns read: {}",
                          show_value(fitted), show_value(Json(features()))));
}

void FeatureColumns::add(const std::string& name, ComponentSpec spec, const Json& built_from) {
  ComponentSpec built = spec;
  if (!built_from.is_null()) built.spec = built_from;
  columns_.push_back(column_registry().create(built, name));
  names_.push_back(name);
  specs_.push_back(std::move(spec));
}

void FeatureColumns::link() {
  auto column_named = [&](const std::string& name) -> const FeatureColumn* {
    auto found = std::find(names_.begin(), names_.end(), name);
    return found == names_.end() ? nullptr : columns_[size_t(found - names_.begin())].get();
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

namespace {

// One part of the fitting pass: what its rows gave each column, the rows refused, which of the
// features the columns read its records hold (even without a value), and the first record's
// feature names.
struct PartFit {
  PartStatistics statistics;
  RefusedRows refused;
  std::vector<char> present;
  std::vector<std::string> first_names;
};

// Up to a screenful of the names a record holds, for a message.
std::string some_names(const std::vector<std::string>& names) {
  constexpr size_t kShown = 30;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  return fmt::format("{}{}", fmt::join(shown, ", "), names.size() > kShown ? ", ..." : "");
}

// The rows of a source but those refused, numbered and parted as the source's own: a source
// that can only be read in order (streamed records, whose passes read the files once each)
// is read in order.
class RowsBut : public TabularSource {
 public:
  RowsBut(const TabularSource& source, const RefusedRows& refused)
      : source_(source), refused_(refused.rows) {
    if (static_cast<int64_t>(refused_.size()) >= source.rows())
      throw Error("the feature columns refused every training record; the first: " +
                  refused.first_problem);
  }
  int64_t rows() const override { return source_.rows(); }
  void visit(int64_t begin, int64_t end, const RowVisitor& visit) const override {
    source_.visit(begin, end,
                  [&](int64_t row, const io::Features& features, const io::RecordLocation& where) {
                    if (!std::binary_search(refused_.begin(), refused_.end(), row))
                      visit(row, features, where);
                  });
  }

 private:
  const TabularSource& source_;
  const std::vector<int64_t>& refused_;
};

}  // namespace

void FeatureColumns::fit(const TabularSource& train, int64_t threads, bool skip_refused) {
  if (!skip_refused) return fit_rows(train, threads, nullptr);
  RefusedRows refused;
  fit_rows(train, threads, &refused);
  // A row refused only when written (a missing feature with missing: fail) still reached the
  // other columns' statistics: fit again without it. What write() refuses does not depend on
  // what was fitted, so this settles at once; the bound is a guard.
  for (int round = 0; round < 3; ++round) {
    RefusedRows written = this->refused(train, threads);
    if (std::includes(refused.rows.begin(), refused.rows.end(), written.rows.begin(),
                      written.rows.end()))
      return;
    std::vector<int64_t> both;
    std::set_union(refused.rows.begin(), refused.rows.end(), written.rows.begin(),
                   written.rows.end(), std::back_inserter(both));
    if (refused.rows.empty()) refused.first_problem = written.first_problem;
    refused.rows = std::move(both);
    fit_rows(RowsBut(train, refused), threads, nullptr);
  }
}

void FeatureColumns::fit_rows(const TabularSource& train, int64_t threads, RefusedRows* refused) {
  if (train.rows() == 0) throw Error("no training record to fit the feature columns on");
  std::vector<std::string> wanted = features();
  std::vector<PartFit> gathered = gather_parts<PartFit>(
      train, threads,
      [&] {
        PartFit part;
        for (const auto& column : columns_) part.statistics.push_back(column->statistics());
        part.present.assign(wanted.size(), 0);
        return part;
      },
      [&](PartFit& part, int64_t row, const io::Features& features,
          const io::RecordLocation& where) {
        if (part.first_names.empty())
          for (const auto& named : features) part.first_names.push_back(named.first);
        for (size_t f = 0; f < wanted.size(); ++f)
          if (!part.present[f] && features.count(wanted[f])) part.present[f] = 1;
        try {
          for (auto& statistics : part.statistics)
            if (statistics) statistics->add(features, where);
        } catch (const DataError& e) {
          if (!refused) throw;
          part.refused.add(row, e.what());
        }
      });
  std::vector<char> present(wanted.size(), 0);
  const std::vector<std::string>* first_names = nullptr;  // of the first part that had a record
  for (const PartFit& part : gathered) {
    for (size_t f = 0; f < wanted.size(); ++f) present[f] = present[f] || part.present[f];
    if (!first_names && !part.first_names.empty()) first_names = &part.first_names;
  }
  check_present(wanted, present, first_names ? *first_names : std::vector<std::string>());
  if (refused) {
    for (const PartFit& part : gathered) refused->merge(part.refused);
    // A refused row may have reached some columns' statistics before the one that refused it:
    // gather again without those rows.
    if (!refused->rows.empty()) return fit_rows(RowsBut(train, *refused), threads, nullptr);
  }
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (!gathered[0].statistics[c]) continue;
    for (size_t p = 1; p < gathered.size(); ++p)
      gathered[0].statistics[c]->merge(*gathered[p].statistics[c]);
    try {
      columns_[c]->fit(*gathered[0].statistics[c]);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      throw ConfigError(specs_[c].path, "", e.what());
    }
  }
  measure();
}

// A feature that no record holds is a name the data does not have (a misspelt `feature:`): its
// column would write nothing but zeros, or its default, for every example.
void FeatureColumns::check_present(const std::vector<std::string>& wanted,
                                   const std::vector<char>& present,
                                   const std::vector<std::string>& first_names) const {
  for (size_t f = 0; f < wanted.size(); ++f) {
    if (present[f]) continue;
    size_t c = 0;
    auto reads = [&](size_t i) {
      std::vector<std::string> read = columns_[i]->features();
      return std::find(read.begin(), read.end(), wanted[f]) != read.end();
    };
    while (c + 1 < columns_.size() && !reads(c)) ++c;
    const Json& spec = specs_[c].spec;
    std::string path = specs_[c].path;
    if (spec.is_object() && spec.value("feature", Json("")) != "")
      path = child_path(path, "feature");
    else if (spec.is_object() && spec.contains("features"))
      path = child_path(path, "features");
    throw ConfigError(path, "",
                      "no training record has a feature \"" + wanted[f] +
                          "\"; the first record's are: " + some_names(first_names));
  }
}

RefusedRows FeatureColumns::refused(const TabularSource& source, int64_t threads) const {
  struct PartCheck {
    RefusedRows refused;
    std::vector<float> row;
  };
  std::vector<PartCheck> parts = gather_parts<PartCheck>(
      source, threads,
      [&] {
        return PartCheck{{}, std::vector<float>(size_t(width_))};
      },
      [&](PartCheck& part, int64_t row, const io::Features& features,
          const io::RecordLocation& where) {
        try {
          write(features, where, part.row.data());
        } catch (const DataError& e) {
          part.refused.add(row, e.what());
        }
      });
  RefusedRows refused;
  for (const PartCheck& part : parts) refused.merge(part.refused);
  return refused;
}

Json FeatureColumns::preprocessing() const {
  Json columns = Json::array();
  for (size_t c = 0; c < columns_.size(); ++c)
    columns.push_back({{"name", names_[c]},
                       {"spec", specs_[c].spec},
                       {"fitted", columns_[c]->fitted()},
                       {"width", columns_[c]->width()}});
  Json made = {{"format", kFormat},
               {"version", 1},
               {"columns", columns},
               {"width", width_},
               {"features", features()}};
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
  if (InputGroups saved = saved_groups(preprocessing, names_); saved != groups_)
    throw ConfigError("preprocessing.json", "",
                      "its inputs " + show_value(saved.json()) + " are not the config's " +
                          show_value(groups_.json()));
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
