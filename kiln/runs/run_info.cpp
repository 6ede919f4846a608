#include "kiln/runs/run_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>
#include <tuple>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/core/folder_lock.h"
#include "kiln/core/json_text.h"
#include "kiln/core/parallel.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"

namespace kiln::runs {
namespace {

namespace fs = std::filesystem;

// The last part of metrics.csv is enough for the latest values: a long run's file is not read
// whole, so listing stays fast however long runs trained.
constexpr std::streamoff kMetricsTail = 64 * 1024;
constexpr std::string_view kMetricsHeader = "step,epoch,split,metric,value,wall_time";

// A cell as the writer formats a number ({:g}: no hexadecimal, no spaces, nan and inf as words).
double number_cell(const std::string& cell, const char* column) {
  double value = 0;
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (cell.empty() || error != std::errc() || end != cell.data() + cell.size())
    throw std::invalid_argument(
        fmt::format("{} \"{}\" is not a number", column, cell.substr(0, 40)));
  return value;
}

int64_t whole_cell(const std::string& cell, const char* column) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (cell.empty() || error != std::errc() || end != cell.data() + cell.size() || value < 0)
    throw std::invalid_argument(
        fmt::format("{} \"{}\" is not a whole number >= 0", column, cell.substr(0, 40)));
  return value;
}

void flatten(const Json& node, const std::string& path, std::map<std::string, Json>& out) {
  if (node.is_object() && !node.empty()) {
    for (const auto& [key, child] : node.items())
      flatten(child, path.empty() ? key : path + "." + key, out);
  } else if (!path.empty()) {
    out[path] = node;
  }
}

// The JSON object in the run's file `name`; nothing, with the problem noted, when the file is
// missing (and `required`), unreadable, not JSON or not an object.
std::optional<Json> read_json_object(RunInfo& run, const std::string& name, bool required) {
  try {
    std::optional<std::string> text = read_text_file_if_any(run.path + "/" + name);
    if (!text) {
      if (required) run.problems.push_back(name + " is missing");
      return std::nullopt;
    }
    Json json = parse_json_text(*text);
    if (json.is_object()) return json;
    run.problems.push_back(name + " is not a JSON object");
  } catch (const JsonTextError& e) {
    run.problems.push_back(fmt::format("{} is not a JSON object (cut short?): {}", name, e.what()));
  } catch (const Error& e) {
    run.problems.push_back(e.what());  // not a regular file, too large, unreadable
  }
  return std::nullopt;
}

// The string at `key` of `object`; "" when absent, with a problem noted when it is not text.
std::string text_field(RunInfo& run, const Json& object, const std::string& file,
                       const std::string& key) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return "";
  if (found->is_string()) return found->get<std::string>();
  run.problems.push_back(fmt::format("{}: \"{}\" is {}, not text", file, key, found->type_name()));
  return "";
}

void read_record(RunInfo& run) {
  std::optional<Json> record = read_json_object(run, "run.json", true);
  if (!record) return;
  run.status = text_field(run, *record, "run.json", "status");
  static const std::set<std::string> kStatuses = {"running", "finished", "stopped", "failed",
                                                  "pruned"};
  if (!run.status.empty() && !kStatuses.count(run.status))
    run.problems.push_back(fmt::format(
        "run.json: \"status\" is \"{}\", not running, finished, stopped, failed or pruned",
        run.status));
  run.start_time = text_field(run, *record, "run.json", "start_time");
  run.end_time = text_field(run, *record, "run.json", "end_time");
  std::optional<double> start = parse_iso_time(run.start_time), end = parse_iso_time(run.end_time);
  if (start && end) run.duration_s = *end - *start;
  if (run.duration_s < 0 && start && end)
    run.problems.push_back("run.json: \"end_time\" is before \"start_time\"");
  for (const auto& [key, text, time] :
       {std::tuple("start_time", run.start_time, start), std::tuple("end_time", run.end_time, end)})
    if (!text.empty() && !time)
      run.problems.push_back(
          fmt::format("run.json: \"{}\" is {}, not a UTC time as "
                      "2026-11-28T07:40:56Z",
                      key, show_value(Json(text))));
}

void read_summary(RunInfo& run) {
  // written when training ends: a running or killed run has none
  std::optional<Json> summary = read_json_object(run, "summary.json", false);
  if (!summary) return;
  const Json& steps = summary->value("steps", Json());
  if (steps.is_number_integer() && steps.get<int64_t>() >= 0)
    run.steps = steps.get<int64_t>();
  else if (!steps.is_null())
    run.problems.push_back(
        fmt::format("summary.json: \"steps\" is {}, not a whole number >= 0", show_value(steps)));
  const Json& best = summary->value("best", Json());
  if (best.is_object() && best.value("metric", Json()).is_string() &&
      best.value("value", Json()).is_number())
    run.best = BestValue{
        best["metric"].get<std::string>(), best["value"].get<double>(),
        best.value("step", Json()).is_number_integer() ? best["step"].get<int64_t>() : int64_t{0}};
  else if (!best.is_null())
    run.problems.push_back("summary.json: \"best\" is not {metric: text, value: number}");
  if (run.best && run.steps >= 0 && run.best->step > run.steps)
    run.problems.push_back(
        fmt::format("summary.json: the best value's step {} is past the run's "
                    "{} steps",
                    run.best->step, run.steps));
  const Json& final = summary->value("final", Json());
  if (!final.is_object() && !final.is_null())
    run.problems.push_back("summary.json: \"final\" is not {tag: number}");
  if (!final.is_object()) return;
  for (const auto& [tag, value] : final.items()) {
    if (value.is_number())
      run.final[tag] = value.get<double>();
    else if (!value.is_null() && value != "nan" && value != "inf" && value != "-inf")
      run.problems.push_back(
          fmt::format("summary.json: final \"{}\" is {}, not a number", tag, show_value(value)));
  }
}

// The first line of metrics.csv, which `tail` holds when it starts at the file's start.
std::string metrics_header(const std::string& path, const FilePart& tail) {
  std::string start =
      tail.from == 0 ? tail.bytes : read_file_part(path, 0, kMetricsHeader.size() + 1)->bytes;
  return start.substr(0, start.find('\n'));
}

// metrics.csv, checked as far as it is read: its header and each row of its last part (a long
// run's file is not read whole, so listing stays fast however long runs trained). With
// `take_values` (runs without a summary) the latest value of each tag and the last step.
void read_metrics(RunInfo& run, bool take_values) {
  std::string path = run.path + "/metrics.csv";
  std::optional<FilePart> tail;
  try {
    tail = read_file_part(path, -kMetricsTail);
  } catch (const Error& e) {  // a FIFO, a device: never waited on, never read
    return run.problems.push_back(e.what());
  }
  if (!tail)
    return run.problems.push_back(take_values || run.status.empty()
                                      ? "metrics.csv is missing"
                                      : "metrics.csv is missing, though run.json says " +
                                            run.status);
  std::string header = metrics_header(path, *tail);
  if (header != kMetricsHeader)
    return run.problems.push_back(fmt::format("metrics.csv: its header is {}, not {}",
                                              show_value(Json(header.substr(0, 80))),
                                              kMetricsHeader));
  const std::string& text = tail->bytes;
  size_t whole = text.rfind('\n') + 1;  // 0 without a newline
  // A run still training may be writing its last row; one that ended wrote each row whole.
  if (whole < text.size() && run.status != "running" && run.status != "killed")
    run.problems.push_back("metrics.csv ends in a row cut short");
  size_t at = tail->from > 0 ? text.find('\n') + 1 : 0;  // past a partial first line
  int64_t rows = 0;
  while (at < whole) {
    size_t end = text.find('\n', at);
    try {
      std::optional<MetricsRow> row = parse_metrics_row(text.substr(at, end - at));
      rows += row ? 1 : 0;
      if (row && take_values) {
        run.steps = std::max(run.steps, row->step);
        run.final[row->tag] = row->value;
      }
    } catch (const std::invalid_argument& e) {
      return run.problems.push_back(
          fmt::format("metrics.csv, byte {}: {}", tail->from + int64_t(at), e.what()));
    }
    at = end + 1;
  }
  if (rows == 0 && tail->from > 0)
    run.problems.push_back(fmt::format(
        "metrics.csv: its last {} bytes hold no whole row (a row longer than that?)", text.size()));
  else if (rows == 0 && run.status == "finished" && run.steps > 0)
    run.problems.push_back(
        fmt::format("metrics.csv holds no rows, though summary.json counts {} steps", run.steps));
}

// A finished run wrote its summary.
void check_summary_written(RunInfo& run) {
  std::error_code error;
  if (run.status == "finished" && !fs::exists(run.path + "/summary.json", error))
    run.problems.push_back("summary.json is missing, though run.json says finished");
}

void read_config(RunInfo& run) {
  std::string file = run.path + "/config.yaml";
  if (!fs::exists(file)) return run.problems.push_back("config.yaml is missing");
  try {
    Json config = load_config_file(file);
    // kiln writes a mapping and a final newline: a file cut short may still be YAML, but
    // seldom that.
    std::optional<FilePart> end = read_file_part(file, -1);
    if (!end || end->bytes != "\n" || !config.is_object() || config.empty())
      run.problems.push_back(
          "config.yaml is not a whole config as kiln writes it (empty, or cut short?)");
    if (!config.is_object()) return;
    if (config.contains("name") && config["name"].is_string())
      run.name = config["name"].get<std::string>();
    flatten(config, "", run.hparams);
  } catch (const Error& e) {
    run.problems.push_back(e.what());  // names config.yaml and the line
  }
}

bool is_run_folder(const fs::path& dir) {
  std::error_code error;
  return fs::exists(dir / "run.json", error) || fs::exists(dir / "metrics.csv", error);
}

}  // namespace

std::optional<MetricsRow> parse_metrics_row(const std::string& line) {
  if (line == kMetricsHeader) return std::nullopt;
  std::vector<std::string> cells;
  std::istringstream fields(line);
  for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  if (cells.size() != 6)
    throw std::invalid_argument(fmt::format("a row of {} cells, not 6", cells.size()));
  for (size_t i : {size_t(2), size_t(3)})
    if (!is_valid_utf8(cells[i]) || std::any_of(cells[i].begin(), cells[i].end(), [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        }))
      throw std::invalid_argument("a split or metric name that is not UTF-8 text");
  if (cells[3].empty()) throw std::invalid_argument("a row without its metric's name");
  return MetricsRow{whole_cell(cells[0], "step"), number_cell(cells[1], "epoch"),
                    cells[2] + "/" + cells[3], number_cell(cells[4], "value"),
                    number_cell(cells[5], "wall_time")};
}

std::optional<double> parse_iso_time(const std::string& text) {
  std::tm parts{};
  std::istringstream in(text);
  in >> std::get_time(&parts, "%Y-%m-%dT%H:%M:%SZ");
  if (in.fail()) return std::nullopt;
  return static_cast<double>(timegm(&parts));
}

namespace {

// A run.json that says running, of a run whose lock no process holds, belongs to a run that
// ended without saying so: killed (SIGKILL, out of memory) or its machine went down. The kernel
// lets go of a lock however its holder ends. A holder on another machine may hold a lock that
// does not reach this one (a filesystem without shared locks): its heartbeat tells instead. (A
// run from before run folders had a lock cannot be told apart, and keeps what it says.)
bool holder_has_gone(const std::string& run) {
  std::optional<LockRecord> lock = FolderLock::record(run);
  if (!lock || FolderLock::holder(run)) return false;
  bool elsewhere = !lock->host.empty() && lock->host != this_host();
  return !elsewhere ||
         std::chrono::system_clock::now() - lock->beat > FolderLock::kPresumedDeadAfter;
}

}  // namespace

RunInfo read_run(const std::string& path) {
  RunInfo run;
  run.path = path;
  fs::path folder(path);
  run.id = folder.filename().string();
  run.name = folder.parent_path().filename().string();
  read_record(run);
  if (run.status == "running" && holder_has_gone(path)) run.status = "killed";
  read_config(run);
  read_summary(run);
  read_metrics(run, run.final.empty() || run.steps < 0);
  check_summary_written(run);
  try {
    run.notes = read_text_file_if_any(path + "/notes.md").value_or("");
  } catch (const Error& e) {
    run.problems.push_back(e.what());
  }
  return run;
}

std::vector<RunInfo> read_runs(const std::vector<std::string>& paths) {
  std::vector<RunInfo> runs(paths.size());
  parallel_for(paths.size(), [&](size_t i) { runs[i] = read_run(paths[i]); });
  return runs;
}

std::vector<std::string> find_runs(const std::string& root) {
  std::vector<std::string> found;
  std::error_code error;
  if (!fs::is_directory(root, error))
    throw UsageError(fmt::format("{}: not a folder of runs", root));
  if (is_run_folder(root)) return {root};
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, error),
      end;
  for (; it != end; it.increment(error)) {
    if (error) break;
    if (!it->is_directory(error)) continue;
    if (is_run_folder(it->path())) {
      found.push_back(it->path().string());
      it.disable_recursion_pending();  // its checkpoints and event files are not runs
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace kiln::runs
