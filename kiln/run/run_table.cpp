#include "kiln/run/run_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/core/json_text.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_table.h"
#include "kiln/run/run_query.h"

namespace kiln::run {
namespace {

const std::vector<std::string> kFixedColumns = {"name",     "id",    "status", "start",
                                                "duration", "steps", "best"};

// split/metric of evaluation splits: one number each (confusion matrix cells and per-head
// values have more parts and stay out of the table, not out of --json).
bool is_table_metric(const std::string& tag) {
  bool evaluation = tag.rfind("val/", 0) == 0 || tag.rfind("test/", 0) == 0;
  return evaluation && std::count(tag.begin(), tag.end(), '/') == 1;
}

std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  return fmt::format("{:.4g}", value);
}

std::string json_text(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return number_text(value.get<double>());
  return dump_json(value);
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string duration_text(double seconds) {
  if (seconds < 0) return "";
  auto total = static_cast<int64_t>(std::llround(seconds));
  int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}:{:02d}:{:02d}", hours, minutes, secs);
  return fmt::format("{}:{:02d}", minutes, secs);
}

std::vector<std::string> table_columns(const std::vector<RunInfo>& runs) {
  std::vector<std::string> columns = kFixedColumns;
  std::set<std::string> metrics;
  for (const RunInfo& run : runs)
    for (const auto& [tag, value] : run.final)
      if (is_table_metric(tag)) metrics.insert(tag);
  columns.insert(columns.end(), metrics.begin(), metrics.end());
  if (runs.size() > 1)
    for (const std::string& path : differing_hparams(runs))
      if (path != "name") columns.push_back(path);
  return columns;
}

std::string cell_text(const RunInfo& run, const std::string& column) {
  if (column == "duration") return duration_text(run.duration_s);
  if (column == "status" && !run.problems.empty())
    return (run.status.empty() ? "damaged" : run.status) + " (!)";
  if (column == "best")
    return run.best ? fmt::format("{} {}", run.best->metric, number_text(run.best->value)) : "";
  return json_text(value_of(run, column));
}

std::string runs_table(const std::vector<RunInfo>& runs) {
  if (runs.empty()) return "no runs\n";
  std::vector<std::string> columns = table_columns(runs);
  std::vector<std::vector<std::string>> rows = {columns};
  for (const RunInfo& run : runs) {
    std::vector<std::string> row;
    for (const std::string& column : columns) row.push_back(cell_text(run, column));
    rows.push_back(std::move(row));
  }
  std::string out = aligned_columns(rows);
  for (const RunInfo& run : runs)
    for (const std::string& problem : run.problems)
      out += fmt::format("(!) {}: {}\n", terminal_text(run.path), terminal_text(problem));
  return out;
}

std::string runs_csv(const std::vector<RunInfo>& runs) {
  std::vector<std::string> columns = table_columns(runs);
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_cell(columns[i]);
  out += ",path,problems\n";
  for (const RunInfo& run : runs) {
    for (const std::string& column : columns) out += csv_cell(cell_text(run, column)) + ",";
    std::string problems;
    for (const std::string& problem : run.problems)
      problems += (problems.empty() ? "" : "; ") + problem;
    out += csv_cell(run.path) + "," + csv_cell(problems) + "\n";
  }
  return out;
}

std::string runs_json(const std::vector<RunInfo>& runs) {
  Json out = Json::array();
  for (const RunInfo& run : runs) {
    Json item = {{"path", run.path},
                 {"name", run.name},
                 {"id", run.id},
                 {"status", value_of(run, "status")},
                 {"start", value_of(run, "start")},
                 {"end", value_of(run, "end")},
                 {"duration_s", value_of(run, "duration")},
                 {"steps", value_of(run, "steps")},
                 {"notes", run.notes},
                 {"problems", run.problems}};
    item["best"] = run.best ? Json{{"metric", run.best->metric},
                                   {"value", run.best->value},
                                   {"step", run.best->step}}
                            : Json();
    // Maps' keys, each new: appended, not searched for (a summary may hold many tags).
    Json& final = item["final"] = Json::object();
    for (const auto& [tag, value] : run.final) append_new_key(final, tag, value);
    Json& config = item["config"] = Json::object();
    for (const auto& [path, value] : run.hparams) append_new_key(config, path, value);
    out.push_back(std::move(item));
  }
  return dump_json(out) + "\n";  // NaN as null: the output stays JSON
}

std::string compare_table(const std::vector<RunInfo>& runs) {
  std::vector<std::string> header = {""};
  for (const RunInfo& run : runs) header.push_back(run.name + "/" + run.id);
  std::vector<std::vector<std::string>> rows = {header};
  auto add = [&](const std::string& key, const std::string& label) {
    std::vector<std::string> row = {label};
    for (const RunInfo& run : runs) row.push_back(cell_text(run, key));
    rows.push_back(std::move(row));
  };
  for (const char* field : {"status", "duration", "steps", "best"}) add(field, field);
  std::vector<std::string> differing = differing_hparams(runs);
  for (const std::string& path : differing) add(path, "config " + path);
  std::set<std::string> tags;
  for (const RunInfo& run : runs)
    for (const auto& [tag, value] : run.final)
      if (std::count(tag.begin(), tag.end(), '/') == 1) tags.insert(tag);
  for (const std::string& tag : tags) add(tag, tag);
  std::string out = aligned_columns(rows);
  if (differing.empty()) out += "(the configs are the same)\n";
  return out;
}

}  // namespace kiln::run
