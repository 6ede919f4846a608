#include "kiln/run/run_query.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <set>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/core/suggest.h"

namespace kiln::run {
namespace {

const char* const kFields[] = {"name",     "id",    "status", "start", "end",
                               "duration", "steps", "best",   "notes"};

std::optional<double> number_in(const std::string& text) {
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string text_of(const Json& value) {
  return value.is_string() ? value.get<std::string>() : dump_json(value);
}

// -1 (a < b), 0, 1; numbers below text, text by bytes.
int compare_values(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    double x = a.get<double>(), y = b.get<double>();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_number() != b.is_number()) return a.is_number() ? -1 : 1;
  std::string x = text_of(a), y = text_of(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

}  // namespace

Json value_of(const RunInfo& run, const std::string& key) {
  if (key == "name") return run.name;
  if (key == "id") return run.id;
  if (key == "status") return run.status.empty() ? Json() : Json(run.status);
  if (key == "start") return run.start_time.empty() ? Json() : Json(run.start_time);
  if (key == "end") return run.end_time.empty() ? Json() : Json(run.end_time);
  if (key == "duration") return run.duration_s < 0 ? Json() : Json(run.duration_s);
  if (key == "steps") return run.steps < 0 ? Json() : Json(run.steps);
  if (key == "best") return run.best ? Json(run.best->value) : Json();
  if (key == "notes") return run.notes;
  if (auto tag = run.final.find(key); tag != run.final.end()) return tag->second;
  if (auto value = run.hparams.find(key); value != run.hparams.end()) return value->second;
  return Json();
}

RunFilter RunFilter::parse(const std::string& text) {
  for (const char* op : {">=", "<=", "!=", "=", ">", "<"}) {
    size_t at = text.find(op);
    if (at == std::string::npos || at == 0) continue;
    RunFilter filter{text.substr(0, at), op, text.substr(at + std::char_traits<char>::length(op))};
    if (filter.op != "=" && filter.op != "!=" && !number_in(filter.value))
      throw UsageError(fmt::format("--filter {}: {} compares numbers, got \"{}\"", text, filter.op,
                                   filter.value));
    return filter;
  }
  throw UsageError(
      fmt::format("--filter {}: expected KEY=GLOB, KEY!=GLOB, KEY<N, KEY<=N, KEY>N or KEY>=N (e.g. "
                  "status=finished, val/accuracy>0.9, name=fashion*)",
                  text));
}

bool RunFilter::matches(const RunInfo& run) const {
  Json found = value_of(run, key);
  if (found.is_null()) return op == "!=";
  if (op == "=" || op == "!=") {
    std::optional<double> wanted = number_in(value);
    bool equal = found.is_number() && wanted
                     ? found.get<double>() == *wanted
                     : fnmatch(value.c_str(), text_of(found).c_str(), 0) == 0;
    return equal == (op == "=");
  }
  if (!found.is_number()) return false;
  double have = found.get<double>(), limit = *number_in(value);
  if (op == "<") return have < limit;
  if (op == "<=") return have <= limit;
  if (op == ">") return have > limit;
  return have >= limit;
}

std::vector<RunInfo> filtered(std::vector<RunInfo> runs, const std::vector<RunFilter>& filters) {
  if (!filters.empty() && !runs.empty()) {
    std::vector<std::string> keys = known_keys(runs);
    for (const RunFilter& filter : filters)
      if (std::find(keys.begin(), keys.end(), filter.key) == keys.end())
        throw UsageError(fmt::format("--filter: no run has \"{}\"; {}", filter.key,
                                     suggestion_text(filter.key, keys)));
  }
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [&](const RunInfo& run) {
                              return !std::all_of(
                                  filters.begin(), filters.end(),
                                  [&](const RunFilter& filter) { return filter.matches(run); });
                            }),
             runs.end());
  return runs;
}

void sort_runs(std::vector<RunInfo>& runs, const std::string& key) {
  bool descending = !key.empty() && key[0] == '-';
  std::string name = descending ? key.substr(1) : key;
  std::vector<std::string> keys = known_keys(runs);
  if (!runs.empty() && std::find(keys.begin(), keys.end(), name) == keys.end())
    throw UsageError(
        fmt::format("--sort: no run has \"{}\"; {}", name, suggestion_text(name, keys)));
  std::stable_sort(runs.begin(), runs.end(), [&](const RunInfo& a, const RunInfo& b) {
    Json x = value_of(a, name), y = value_of(b, name);
    if (x.is_null() || y.is_null()) return !x.is_null() && y.is_null();
    int order = compare_values(x, y);
    return descending ? order > 0 : order < 0;
  });
}

std::vector<std::string> known_keys(const std::vector<RunInfo>& runs) {
  std::set<std::string> keys(std::begin(kFields), std::end(kFields));
  for (const RunInfo& run : runs) {
    for (const auto& [tag, value] : run.final) keys.insert(tag);
    for (const auto& [path, value] : run.hparams) keys.insert(path);
  }
  return {keys.begin(), keys.end()};
}

std::vector<std::string> differing_hparams(const std::vector<RunInfo>& runs) {
  // A run whose config could not be read has nothing to compare: it does not make every value
  // look different.
  std::vector<const RunInfo*> configured;
  std::set<std::string> paths;
  for (const RunInfo& run : runs) {
    if (run.hparams.empty()) continue;
    configured.push_back(&run);
    for (const auto& [path, value] : run.hparams) paths.insert(path);
  }
  std::vector<std::string> differing;
  for (const std::string& path : paths) {
    Json first = value_of(*configured.front(), path);
    if (std::any_of(configured.begin(), configured.end(),
                    [&](const RunInfo* run) { return value_of(*run, path) != first; }))
      differing.push_back(path);
  }
  return differing;
}

}  // namespace kiln::run
