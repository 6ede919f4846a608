#include "kiln/tabular/raw_feature_types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/error.h"
#include "kiln/core/json_keys.h"
#include "kiln/core/json_text.h"

namespace kiln::tabular {
namespace {

using Kind = io::Feature::Kind;

constexpr Kind kKinds[] = {Kind::kBytes, Kind::kFloat, Kind::kInt64};
// The kind of a raw feature that no record of training had.
constexpr const char* kUnseen = "unseen";
// A tf.Example feature of more values than this is no input a server takes per example.
constexpr int64_t kMostValues = int64_t{1} << 24;

Kind kind_named(const Json& name) {
  for (Kind kind : kKinds)
    if (name == feature_kind_name(kind)) return kind;
  return Kind::kNone;
}

}  // namespace

RawFeatureTypes::RawFeatureTypes(std::vector<std::string> names)
    : names_(std::move(names)), seen_(names_.size()) {}

void RawFeatureTypes::observe(const io::Features& record) {
  for (size_t f = 0; f < names_.size(); ++f) {
    auto found = record.find(names_[f]);
    if (found == record.end()) continue;
    const io::Feature& feature = found->second;
    auto count = static_cast<int64_t>(feature.size());
    if (count == 0) continue;
    Seen& seen = seen_[f];
    seen.bytes |= feature.kind == Kind::kBytes;
    seen.floats |= feature.kind == Kind::kFloat;
    seen.ints |= feature.kind == Kind::kInt64;
    seen.fewest = seen.fewest == 0 ? count : std::min(seen.fewest, count);
    seen.most = std::max(seen.most, count);
  }
}

void RawFeatureTypes::merge(const RawFeatureTypes& other) {
  for (size_t f = 0; f < seen_.size() && f < other.seen_.size(); ++f) {
    Seen& seen = seen_[f];
    const Seen& more = other.seen_[f];
    if (more.most == 0) continue;
    seen.bytes |= more.bytes;
    seen.floats |= more.floats;
    seen.ints |= more.ints;
    seen.fewest = seen.fewest == 0 ? more.fewest : std::min(seen.fewest, more.fewest);
    seen.most = std::max(seen.most, more.most);
  }
}

std::map<std::string, RawFeatureType> RawFeatureTypes::types() const {
  std::map<std::string, RawFeatureType> types;
  for (size_t f = 0; f < names_.size(); ++f) {
    const Seen& seen = seen_[f];
    if (seen.most == 0) continue;
    RawFeatureType type;
    type.kind = seen.bytes ? Kind::kBytes : seen.floats ? Kind::kFloat : Kind::kInt64;
    type.values = seen.fewest == seen.most ? seen.most : RawFeatureType::kVaries;
    types[names_[f]] = type;
  }
  return types;
}

Json RawFeatureTypes::json() const {
  std::map<std::string, Json> entries;
  for (const std::string& name : names_) entries[name] = {{"kind", kUnseen}};
  for (const auto& [name, type] : types())
    entries[name] = {{"kind", feature_kind_name(type.kind)}, {"values", type.values}};
  Json made = Json::object();
  for (auto& [name, entry] : entries) append_new_key(made, name, std::move(entry));  // each new
  return made;
}

RawFeatureTypes RawFeatureTypes::from_json(const Json& json, const std::vector<std::string>& names,
                                           const std::string& path) {
  auto damaged = [&](const std::string& problem) { return ConfigError(path, "", problem); };
  if (!json.is_object())
    throw damaged("expected an object of the raw features' kinds, got " + show_value(json));
  RawFeatureTypes read(names);
  std::unordered_map<std::string, size_t> place;  // hashed: one per key of a damaged file too
  std::unordered_set<std::string> listed;
  for (size_t i = 0; i < names.size(); ++i) place.emplace(names[i], i);
  for (const auto& [name, type] : json.items()) {
    auto found = place.find(name);
    if (found == place.end())
      throw damaged(fmt::format("\"{}\" is no raw feature the columns read ({})", name,
                                fmt::join(names, ", ")));
    const Json& kind = type.is_object() ? type.value("kind", Json()) : Json();
    const Json& values = type.is_object() ? type.value("values", Json()) : Json();
    listed.insert(name);
    std::vector<std::string> keys = {"kind"};
    if (kind != kUnseen) keys.push_back("values");
    if (std::string unknown = unknown_key_problem(type, keys, "a raw feature's entry");
        !unknown.empty())
      throw damaged(fmt::format("\"{}\": {}", name, unknown));
    if (kind == kUnseen) continue;  // no record of training had it: it stays unknown
    if (kind_named(kind) == Kind::kNone)
      throw damaged(
          fmt::format("\"{}\": \"kind\" is bytes_list, float_list, int64_list or {}, not {}", name,
                      kUnseen, show_value(kind)));
    if (!values.is_number_integer() ||
        (values != RawFeatureType::kVaries && (values < 1 || values > kMostValues)))
      throw damaged(
          fmt::format("\"{}\": \"values\" is a count from 1 to {}, or -1 (it varies), "
                      "not {}",
                      name, kMostValues, show_value(values)));
    Seen& seen = read.seen_[found->second];
    Kind given = kind_named(kind);
    seen.bytes = given == Kind::kBytes;
    seen.floats = given == Kind::kFloat;
    seen.ints = given == Kind::kInt64;
    // As if seen: a varying count as records of 1 and 2 values.
    int64_t count = values.get<int64_t>();
    seen.fewest = count == RawFeatureType::kVaries ? 1 : count;
    seen.most = count == RawFeatureType::kVaries ? 2 : count;
  }
  // Each is written, seen or not: one missing was taken out of the file, and its kind with it.
  for (const std::string& name : names)
    if (!listed.count(name))
      throw damaged(
          fmt::format("\"{}\" is missing: the file gives the kind of every raw feature "
                      "the columns read (\"{}\" for one no record had)",
                      name, kUnseen));
  return read;
}

}  // namespace kiln::tabular
