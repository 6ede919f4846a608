#include "kiln/tabular/feature_statistics.h"

#include <algorithm>
#include <cmath>

#include "kiln/tabular/parallel_pass.h"

namespace kiln::tabular {
namespace {

// More distinct values than this are not counted further: an identifier column would otherwise
// hold the whole file in memory.
constexpr size_t kMaxDistinct = 100000;

void add_number(FeatureSummary& s, double x) {
  s.values += 1;
  if (s.values == 1) s.min = s.max = x;
  s.min = std::min(s.min, x);
  s.max = std::max(s.max, x);
  double delta = x - s.mean;
  s.mean += delta / double(s.values);
  s.m2 += delta * (x - s.mean);
}

void count(FeatureSummary& s, const std::string& value) {
  if (s.counts.size() < kMaxDistinct || s.counts.count(value)) s.counts[value] += 1;
}

void add_feature(FeatureSummary& s, const io::Feature& feature) {
  std::string type = io::feature_kind_name(feature.kind);
  s.type = s.type.empty() || s.type == type ? type : "mixed";
  s.records += 1;
  for (float x : feature.floats) add_number(s, x);
  for (int64_t x : feature.ints) {
    add_number(s, double(x));
    count(s, std::to_string(x));
  }
  for (const std::string& text : feature.bytes) {
    s.values += 1;
    count(s, text);
  }
}

void merge(FeatureSummary& into, const FeatureSummary& from) {
  // An empty type: no record of that part had a value.
  if (!from.type.empty())
    into.type = into.type.empty() || into.type == from.type ? from.type : "mixed";
  into.records += from.records;
  double numbers = double(into.values), more = double(from.values);
  if (more > 0) {
    double total = numbers + more, delta = from.mean - into.mean;
    into.min = numbers > 0 ? std::min(into.min, from.min) : from.min;
    into.max = numbers > 0 ? std::max(into.max, from.max) : from.max;
    into.mean += delta * more / total;
    into.m2 += from.m2 + delta * delta * numbers * more / total;
  }
  into.values += from.values;
  for (const auto& [value, n] : from.counts)
    if (into.counts.size() < kMaxDistinct || into.counts.count(value)) into.counts[value] += n;
}

}  // namespace

FeatureTable describe_features(const TabularSource& source, int64_t threads) {
  std::vector<FeatureTable> parts = gather_parts<FeatureTable>(
      source, threads, [] { return FeatureTable{}; },
      [](FeatureTable& part, int64_t, const io::Features& features, const io::RecordLocation&) {
        part.records += 1;
        // A feature without a value is still listed: one missing in every record shows so.
        for (const auto& [name, feature] : features)
          if (feature.size() > 0)
            add_feature(part.features[name], feature);
          else
            part.features.try_emplace(name);
      });
  FeatureTable table;
  for (const FeatureTable& part : parts) {
    table.records += part.records;
    for (const auto& [name, summary] : part.features) merge(table.features[name], summary);
  }
  return table;
}

Json feature_table_json(const FeatureTable& table, int64_t top) {
  Json features = Json::object();
  for (const auto& [name, s] : table.features) {
    Json row = {{"type", s.type.empty() ? "none" : s.type},
                {"records", s.records},
                {"missing", table.records - s.records},
                {"values", s.values}};
    if (s.type == "float_list" || s.type == "int64_list") {
      row["min"] = s.min;
      row["max"] = s.max;
      row["mean"] = s.mean;
      row["std"] = s.values > 0 ? std::sqrt(s.m2 / double(s.values)) : 0.0;
    }
    if (!s.counts.empty()) {
      std::vector<std::pair<std::string, int64_t>> sorted(s.counts.begin(), s.counts.end());
      std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
      if (int64_t(sorted.size()) > top) sorted.resize(size_t(top));
      Json values = Json::array();
      for (const auto& [value, n] : sorted) values.push_back({{"value", value}, {"count", n}});
      row["distinct"] = s.counts.size();
      row["top"] = values;
    }
    features[name] = row;
  }
  return {{"records", table.records}, {"features", features}};
}

}  // namespace kiln::tabular
