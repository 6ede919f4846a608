#include "kiln/tabular/feature_columns.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"
#include "kiln/core/json_keys.h"

// preprocessing.json: what fit() learned written out, and read back (from_preprocessing,
// restore) with every part of it checked: it comes from disk, and may be damaged or edited.

namespace kiln::tabular {
namespace {

constexpr const char* kFormat = "kiln.preprocessing";
// 2: "features" and "raw_features" are always written (a version 1 file may lack them).
constexpr int64_t kVersion = 2;

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
  std::string unknown = unknown_key_problem(column, {"name", "spec", "fitted", "width"},
                                            "a column of preprocessing.json");
  if (!unknown.empty())
    malformed("column \"" + column["name"].get<std::string>() + "\": " + unknown);
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

// What the file is, said precisely: "not a kiln preprocessing file" for one whose `fitted` block
// was gone misled a campaign into looking at the wrong file.
void check_format(const Json& preprocessing) {
  if (!preprocessing.is_object())
    malformed("not a kiln preprocessing file: a JSON object is expected, not " +
              show_value(preprocessing));
  if (preprocessing.value("format", Json()) != kFormat)
    malformed(fmt::format("not a kiln preprocessing file: its \"format\" is {}, not \"{}\"",
                          show_value(preprocessing.value("format", Json())), kFormat));
  if (!preprocessing.contains("columns")) malformed("its \"columns\" list is missing");
  if (!preprocessing["columns"].is_array())
    malformed("its \"columns\" is " + show_value(preprocessing["columns"]) + ", not a list");
}

}  // namespace

std::unique_ptr<FeatureColumns> FeatureColumns::from_preprocessing(const Json& preprocessing) {
  check_format(preprocessing);
  const Json& version = preprocessing.value("version", Json());
  if (!version.is_number_integer() || version.get<int64_t>() < 1 ||
      version.get<int64_t>() > kVersion)
    malformed(fmt::format("its \"version\" is {}; this kiln reads versions 1 to {}",
                          show_value(version), kVersion));
  // Version 2 on always lists the features and their raw kinds: one without them lost them.
  for (const char* key : {"features", "raw_features"})
    if (version.get<int64_t>() >= 2 && !preprocessing.contains(key))
      malformed(fmt::format("its \"{}\" is missing (a version {} file lists them)", key,
                            version.get<int64_t>()));
  std::unique_ptr<FeatureColumns> made(new FeatureColumns());
  const Json& columns = preprocessing["columns"];
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;  // hashed: a damaged file may list 100,000 columns
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string name = column_name(columns[i], i);
    if (!seen.insert(name).second) malformed("the column \"" + name + "\" is listed twice");
    ComponentSpec spec("column");
    spec.path = "preprocessing.json:" + name;
    spec.spec = column_registry().resolve(columns[i]["spec"], ReadContext{spec.path, nullptr});
    made->add(name, std::move(spec), without_files(columns[i]));
    names.push_back(name);
  }
  made->groups_ = saved_groups(preprocessing, names);
  made->derived_ = DerivedFeatures::from_json(preprocessing.value("derived", Json()),
                                              "preprocessing.json:derived");
  made->link();
  made->derived_inputs_ = made->derived_.needed_for(made->features());
  // Before the raw features' kinds: a column edited to read another feature is said as such.
  made->check_fitted_features(preprocessing.value("features", Json()));
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

Json FeatureColumns::preprocessing() const {
  Json columns = Json::array();
  for (size_t c = 0; c < columns_.size(); ++c)
    columns.push_back({{"name", names_[c]},
                       {"spec", specs_[c].spec},
                       {"fitted", columns_[c]->fitted()},
                       {"width", columns_[c]->width()}});
  Json made = {{"format", kFormat},
               {"version", kVersion},
               {"columns", columns},
               {"width", width_},
               {"features", features()}};
  if (groups_.named) made["inputs"] = groups_.json();
  if (!derived_.empty()) made["derived"] = derived_.json();
  // Columns of vocabulary files alone are never fitted: no record was looked at, and each raw
  // feature is written as unseen.
  made["raw_features"] =
      raw_types_.names().empty() ? RawFeatureTypes(raw_features()).json() : raw_types_.json();
  return made;
}

void FeatureColumns::restore(const Json& preprocessing) {
  if (!preprocessing.is_object() || !preprocessing.contains("columns") ||
      !preprocessing["columns"].is_array())
    malformed("expected an object with a \"columns\" list");
  std::string unknown = unknown_key_problem(
      preprocessing,
      {"format", "version", "columns", "width", "features", "inputs", "derived", "raw_features"},
      "a preprocessing file");
  if (!unknown.empty()) malformed(unknown);  // a misspelt one was let be
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
  if (Json saved = preprocessing.value("derived", Json::object()); saved != derived_.json())
    throw ConfigError("data.derived", "",
                      "differs from the derived features the run was fitted with (" + saved.dump() +
                          "); start a new run to change them");
  for (size_t c = 0; c < columns_.size(); ++c) {
    std::string path = "preprocessing.json:" + names_[c];
    // Both resolved (every option filled in), so that a file written by hand compares too.
    Json theirs = column_registry().resolve(columns[c]["spec"], ReadContext{path, nullptr});
    if (theirs != specs_[c].spec)
      throw ConfigError(specs_[c].path, "",
                        "the column differs from the one the run was fitted with (" +
                            theirs.dump() + "); start a new run to change it");
    const Json& fitted = columns[c].value("fitted", Json());
    columns_[c]->restore(fitted, path);
    check_fitted_reads_back(c, fitted);
  }
  // Written since served models list their raw features; an older file says nothing of them.
  raw_types_ = preprocessing.contains("raw_features")
                   ? RawFeatureTypes::from_json(preprocessing["raw_features"], raw_features(),
                                                "preprocessing.json:raw_features")
                   : RawFeatureTypes();
  measure();
  check_raw_types();
}

// What a column keeps of its "fitted" is what it writes again: anything else (a key no column
// of its kind has, a fill for a column that fills no gap) would be ignored, and an edit meant to
// change the served model would silently change nothing.
void FeatureColumns::check_fitted_reads_back(size_t c, const Json& fitted) const {
  Json kept = columns_[c]->fitted();
  if (kept == fitted) return;
  std::string problem =
      "its \"fitted\" " + show_value(fitted) + " is not what the column keeps of it";
  if (fitted.is_object() && kept.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : kept.items()) keys.push_back(key);
    std::string unknown = unknown_key_problem(fitted, keys, "its \"fitted\"");
    if (!unknown.empty()) problem = unknown;
  }
  malformed(fmt::format("column \"{}\": {} (kept: {})", names_[c], problem, show_value(kept)));
}

// The kinds preprocessing.json gives the raw features, tried on the columns that read them: a
// numeric feature declared bytes_list loaded, its metadata said DT_STRING, and a client that sent
// a string was refused. Each column is given a value of each kind it reads, and the column's own
// reader judges it.
void FeatureColumns::check_raw_types() const {
  if (raw_types_.names().empty()) return;  // an older file: nothing is known of them
  std::map<std::string, RawFeatureType> types = raw_types_.types();
  std::vector<std::string> derived_names = derived_inputs_.names();
  std::unordered_set<std::string> derived(derived_names.begin(), derived_names.end());
  std::vector<float> row;
  for (size_t c = 0; c < columns_.size(); ++c) {
    io::Features example;
    for (const std::string& feature : columns_[c]->features()) {
      if (derived.count(feature)) continue;  // an expression's
      auto type = types.find(feature);
      io::Feature::Kind kind = type == types.end() ? io::Feature::Kind::kNone : type->second.kind;
      if (std::string why = columns_[c]->contradicted_kind(feature, kind); !why.empty())
        throw ConfigError(
            "preprocessing.json:raw_features", "",
            fmt::format("\"{}\" is said to be {}, but column \"{}\" says it was not: {}", feature,
                        type == types.end() ? "unseen" : feature_kind_name(kind), names_[c], why));
      if (type == types.end()) continue;  // no record had it: nothing to try
      size_t count = type->second.values > 0 ? size_t(type->second.values) : 1;
      example[feature] = type->second.kind == io::Feature::Kind::kBytes
                             ? io::bytes_feature(std::vector<std::string>(count, "0"))
                         : type->second.kind == io::Feature::Kind::kFloat
                             ? io::float_feature(std::vector<float>(count, 0.0f))
                             : io::int64_feature(std::vector<int64_t>(count, 0));
    }
    if (example.empty()) continue;
    row.assign(size_t(columns_[c]->width()), 0.0f);
    try {
      columns_[c]->write(example, {"preprocessing.json"}, row.data());
    } catch (const DataError& e) {
      throw ConfigError("preprocessing.json:raw_features", "",
                        fmt::format("the kinds it gives are not what column \"{}\" reads: {}",
                                    names_[c], e.what()));
    }
  }
}

}  // namespace kiln::tabular
