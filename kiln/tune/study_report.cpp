#include "kiln/tune/study_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kiln/core/json_text.h"
#include "kiln/core/text_table.h"
#include "kiln/tune/fanova.h"

namespace kiln::tune {
namespace {

// A value as the table shows it: numbers to 4 significant digits, other values as JSON.
std::string cell(const Json& value) {
  if (value.is_number_float()) return fmt::format("{:.4g}", value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return dump_json(value);
}

// The group of each trial by `p`: its value's index (choices), its quantile bin (numbers), or
// -1 where `p` did not apply.
std::vector<int64_t> groups_by(const Parameter& p, const std::vector<const TrialRecord*>& trials) {
  std::vector<double> seen;
  for (const TrialRecord* t : trials)
    if (t->assignment.count(p.name)) seen.push_back(t->assignment.at(p.name));
  std::sort(seen.begin(), seen.end());
  size_t bins = std::clamp<size_t>(seen.size() / 4, 2, 5);
  std::vector<int64_t> out;
  for (const TrialRecord* t : trials) {
    auto found = t->assignment.find(p.name);
    if (found == t->assignment.end()) {
      out.push_back(-1);
    } else if (p.distribution->choices()) {
      out.push_back(std::llround(found->second));
    } else {
      size_t below =
          size_t(std::lower_bound(seen.begin(), seen.end(), found->second) - seen.begin());
      out.push_back(int64_t(below * bins / std::max<size_t>(seen.size(), 1)));
    }
  }
  return out;
}

double correlation_ratio(const std::vector<int64_t>& groups, const std::vector<double>& values) {
  double mean = 0;
  for (double v : values) mean += v;
  mean /= double(values.size());
  std::map<int64_t, std::pair<double, int64_t>> sums;
  double total = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    sums[groups[i]].first += values[i];
    sums[groups[i]].second += 1;
    total += (values[i] - mean) * (values[i] - mean);
  }
  double between = 0;
  for (const auto& [group, sum] : sums) {
    double group_mean = sum.first / double(sum.second);
    between += double(sum.second) * (group_mean - mean) * (group_mean - mean);
  }
  return total > 0 ? between / total : 0;
}

}  // namespace

std::optional<TrialRecord> best_trial(const std::vector<TrialRecord>& trials, bool maximize) {
  std::optional<TrialRecord> best;
  for (const TrialRecord& t : trials)
    if (t.state == TrialState::kComplete && t.value &&
        (!best || (maximize ? *t.value > *best->value : *t.value < *best->value)))
      best = t;
  return best;
}

std::string trials_table(const StudyInfo& info, const SearchSpace& space,
                         const std::vector<TrialRecord>& trials) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"trial", "state", info.metric};
  for (const Parameter& p : space.parameters()) header.push_back(p.name);
  header.push_back("note");
  rows.push_back(header);
  for (const TrialRecord& t : trials) {
    std::vector<std::string> row = {std::to_string(t.number), state_name(t.state),
                                    t.value ? fmt::format("{:.6g}", *t.value) : "-"};
    for (const Parameter& p : space.parameters())
      row.push_back(t.values.contains(p.name) ? cell(t.values[p.name]) : "-");
    row.push_back(t.error);
    rows.push_back(row);
  }
  return aligned_columns(rows);
}

std::vector<std::pair<std::string, double>> importance(const SearchSpace& space,
                                                       const std::vector<TrialRecord>& trials) {
  std::vector<const TrialRecord*> complete;
  std::vector<double> values;
  for (const TrialRecord& t : trials)
    if (t.state == TrialState::kComplete && t.value) {
      complete.push_back(&t);
      values.push_back(*t.value);
    }
  if (complete.size() < 3) return {};
  std::vector<std::pair<std::string, double>> out;
  double sum = 0;
  for (const Parameter& p : space.parameters()) {
    out.emplace_back(p.name, correlation_ratio(groups_by(p, complete), values));
    sum += out.back().second;
  }
  if (sum <= 0) return {};
  for (auto& [name, share] : out) share /= sum;
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<std::pair<std::string, double>> fanova_importance(
    const SearchSpace& space, const std::vector<TrialRecord>& trials) {
  std::vector<const TrialRecord*> complete;
  for (const TrialRecord& t : trials)
    if (t.state == TrialState::kComplete && t.value) complete.push_back(&t);
  std::vector<const Parameter*> shared;  // those every complete trial has
  for (const Parameter& p : space.parameters())
    if (std::all_of(complete.begin(), complete.end(),
                    [&](const TrialRecord* t) { return t->assignment.count(p.name) > 0; }))
      shared.push_back(&p);
  if (complete.size() < 3 || shared.empty()) return {};
  std::vector<FanovaSample> samples;
  for (const TrialRecord* t : complete) {
    FanovaSample sample{{}, *t->value};
    for (const Parameter* p : shared) {
      const Distribution& d = *p->distribution;
      sample.x.push_back((t->assignment.at(p->name) - d.low()) / (d.high() - d.low()));
    }
    samples.push_back(std::move(sample));
  }
  std::vector<double> shares = fanova_importances(samples, shared.size());
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < shares.size(); ++i) out.emplace_back(shared[i]->name, shares[i]);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

Json trial_config_tree(const StudyInfo& info, const SearchSpace& space, const TrialRecord& trial) {
  RawConfig config;
  config.tree = info.config;
  config.tree.erase("tune");
  space.apply(trial.assignment, config, fmt::format("trial {}", trial.number));
  return config.tree;
}

SearchSpace study_space(const StudyInfo& info) {
  return SearchSpace::read(info.config.at("tune").at("space"), {"tune.space", nullptr});
}

}  // namespace kiln::tune
