#include "kiln/run/run_info.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
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
#include "kiln/run/metrics_csv.h"
#include "kiln/run/run_directory.h"

namespace kiln::run {
namespace {

namespace fs = std::filesystem;

// The last part of metrics.csv is enough for the latest values: a long run's file is not read
// whole, so listing stays fast however long runs trained.
constexpr int64_t kMetricsTail = 64 * 1024;

// What a run's settings may take as dotted paths: a resolved config has some hundreds, of tens
// of bytes each. Each leaf holds its whole path, so 62 levels of 1,000-byte keys over 20,000
// leaves (a 1.5 MB file) once took 1.4 GB to list.
constexpr size_t kMaxSettings = 20000;
constexpr size_t kMaxSettingPathBytes = size_t{2} << 20;

struct SettingsBudget {
  size_t settings = 0, path_bytes = 0;
  bool exceeded() const { return settings > kMaxSettings || path_bytes > kMaxSettingPathBytes; }
};

// false when the budget ran out (`out` is then incomplete).
bool flatten(const Json& node, const std::string& path, std::map<std::string, Json>& out,
             SettingsBudget& budget) {
  if (node.is_object() && !node.empty()) {
    for (const auto& [key, child] : node.items())
      if (!flatten(child, path.empty() ? key : path + "." + key, out, budget)) return false;
  } else if (!path.empty()) {
    budget.settings += 1;
    budget.path_bytes += path.size();
    if (budget.exceeded()) return false;
    out[path] = node;
  }
  return true;
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

// run.json's fields into `run`, each checked.
void check_record(RunInfo& run, const Json& record) {
  run.status = text_field(run, record, "run.json", "status");
  static const std::set<std::string> kStatuses = {"running", "finished", "stopped", "failed",
                                                  "pruned"};
  if (!run.status.empty() && !kStatuses.count(run.status))
    run.problems.push_back(fmt::format(
        "run.json: \"status\" is \"{}\", not running, finished, stopped, failed or pruned",
        run.status));
  run.start_time = text_field(run, record, "run.json", "start_time");
  run.end_time = text_field(run, record, "run.json", "end_time");
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

void read_record(RunInfo& run) {
  std::optional<Json> record = read_json_object(run, kRecordFile, true);
  if (record) check_record(run, *record);
}

// summary.json's fields into `run`, each checked.
void check_summary(RunInfo& run, const Json& summary) {
  const Json& steps = summary.value("steps", Json());
  if (steps.is_number_integer() && steps.get<int64_t>() >= 0)
    run.steps = steps.get<int64_t>();
  else if (!steps.is_null())
    run.problems.push_back(
        fmt::format("summary.json: \"steps\" is {}, not a whole number >= 0", show_value(steps)));
  const Json& best = summary.value("best", Json());
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
  const Json& final = summary.value("final", Json());
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

void read_summary(RunInfo& run) {
  // written when training ends: a running or killed run has none
  std::optional<Json> summary = read_json_object(run, kSummaryFile, false);
  if (summary) check_summary(run, *summary);
}

// metrics.csv, checked as far as it is read: its header and each row of its last part. With
// `take_values` (runs without a summary) the latest value of each tag and the last step.
void read_metrics(RunInfo& run, bool take_values) {
  MetricsTail tail = read_metrics_tail(run.path + "/" + kMetricsFile, kMetricsTail);
  if (!tail.unreadable.empty()) return run.problems.push_back(tail.unreadable);
  if (tail.missing)
    return run.problems.push_back(take_values || run.status.empty()
                                      ? "metrics.csv is missing"
                                      : "metrics.csv is missing, though run.json says " +
                                            run.status);
  // A run still training may be writing its last row; one that ended wrote each row whole.
  if (tail.ends_cut_short && run.status != "running" && run.status != "killed")
    run.problems.push_back("metrics.csv ends in a row cut short");
  if (take_values)
    for (const MetricsRow& row : tail.rows) {
      run.steps = std::max(run.steps, row.step);
      run.final[row.tag] = row.value;
    }
  if (!tail.damaged_row.empty()) return run.problems.push_back(tail.damaged_row);
  if (tail.rows.empty() && tail.partial)
    run.problems.push_back(fmt::format(
        "metrics.csv: its last {} bytes hold no whole row (a row longer than that?)", tail.bytes));
  else if (tail.rows.empty() && run.status == "finished" && run.steps > 0)
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
    SettingsBudget budget;
    if (!flatten(config, "", run.hparams, budget)) {
      run.hparams.clear();
      run.problems.push_back(
          fmt::format("config.yaml has more than {} settings, or names them in more than {} MiB "
                      "of dotted paths: its settings are not listed",
                      kMaxSettings, kMaxSettingPathBytes >> 20));
    }
  } catch (const Error& e) {
    run.problems.push_back(e.what());  // names config.yaml and the line
  }
}

bool is_run_folder(const fs::path& dir) {
  std::error_code error;
  return fs::exists(dir / kRecordFile, error) || fs::exists(dir / kMetricsFile, error);
}

}  // namespace

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

namespace {

// The run's JSON file `name` checked by `check`: nothing when it is missing and not `required`;
// DataError naming the file and every problem found otherwise.
std::optional<Json> checked_object(const std::string& path, const char* name, bool required,
                                   void (*check)(RunInfo&, const Json&)) {
  RunInfo scratch;
  scratch.path = path;
  std::optional<Json> object = read_json_object(scratch, name, required);
  if (object) check(scratch, *object);
  if (scratch.problems.empty()) return object;
  std::string problems;
  for (std::string problem : scratch.problems) {
    if (problem.rfind(std::string(name) + ": ", 0) == 0) problem.erase(0, strlen(name) + 2);
    problems += (problems.empty() ? "" : "; ") + problem;
  }
  throw DataError(path + "/" + name, -1, -1, problems);
}

}  // namespace

Json read_record(const std::string& path) {
  return *checked_object(path, kRecordFile, true, check_record);
}

std::optional<Json> read_summary(const std::string& path) {
  return checked_object(path, kSummaryFile, false, check_summary);
}

std::string newest_unfinished_run(const std::string& runs_root, const std::string& name) {
  std::string parent = runs_root + "/" + name;
  std::vector<std::string> runs;
  std::error_code error;
  if (fs::is_directory(parent, error))
    for (const auto& entry : fs::directory_iterator(parent))
      if (fs::exists(entry.path() / kConfigFile)) runs.push_back(entry.path().string());
  // Run names start with their YYYYmmdd-HHMMSS creation time, so the name orders them.
  std::sort(runs.rbegin(), runs.rend());
  for (const auto& run : runs) {
    std::string status;
    try {
      status = read_record(run).value("status", "");
    } catch (const Error&) {  // unreadable: not known to be finished
    }
    if (status != "finished") return run;
  }
  throw UsageError("no unfinished run of \"" + name + "\" under " + parent +
                   " to resume; give the run directory: --resume RUN_DIR");
}

std::optional<std::string> read_run_text(const std::string& path, const std::string& name) {
  for (const char* shown : {kConfigFile, kNotesFile, kSummaryFile, kRecordFile, kTrainLogFile})
    if (name == shown) return read_text_file_if_any(path + "/" + name);
  return std::nullopt;
}

std::vector<std::string> files_read() {
  return {kConfigFile, kRecordFile, kSummaryFile, kMetricsFile, kNotesFile, kTrainLogFile};
}

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
    // A page of notes, not a book: six notes.md of 250 MB each took the board's runs table to
    // 4.6 GB and 89 s. A bigger one is a problem of the run's, named.
    run.notes = read_text_file_if_any(path + "/notes.md", kMaxNotesBytes).value_or("");
  } catch (const Error& e) {
    run.problems.push_back(e.what());
  }
  return run;
}

std::string run_files_signature(const std::string& path) {
  std::string signature;
  for (const char* file : {kRecordFile, kSummaryFile, kConfigFile, kNotesFile, kMetricsFile}) {
    struct stat status {};
    if (::stat((path + "/" + file).c_str(), &status) == 0)
      signature += std::to_string(status.st_size) + "." + std::to_string(status.st_mtim.tv_sec) +
                   "." + std::to_string(status.st_mtim.tv_nsec);
    signature += ";";
  }
  return signature;
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

}  // namespace kiln::run
