#include "kiln/tune/study.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/tune/sqlite_rows.h"

namespace kiln::tune {
namespace {

constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"(
CREATE TABLE study (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL,
  metric TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('min', 'max')),
  config TEXT NOT NULL,
  created TEXT NOT NULL);
CREATE TABLE parameters (
  name TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  distribution TEXT NOT NULL);
CREATE TABLE trials (
  number INTEGER PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('running', 'complete', 'pruned', 'failed')),
  value REAL,
  run_dir TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  started TEXT NOT NULL,
  finished TEXT NOT NULL DEFAULT '');
CREATE TABLE trial_params (
  trial INTEGER NOT NULL REFERENCES trials (number),
  name TEXT NOT NULL REFERENCES parameters (name),
  value TEXT NOT NULL,
  coordinate REAL NOT NULL,
  PRIMARY KEY (trial, name));
CREATE TABLE intermediate_values (
  trial INTEGER NOT NULL REFERENCES trials (number),
  step INTEGER NOT NULL,
  epoch REAL NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (trial, step));
)";

TrialState state_of(const std::string& name, const CheckedRow& row) {
  for (TrialState s :
       {TrialState::kRunning, TrialState::kComplete, TrialState::kPruned, TrialState::kFailed})
    if (name == state_name(s)) return s;
  row.fail(fmt::format("unknown trial state \"{}\" (running, complete, pruned or failed)", name));
}

}  // namespace

const char* state_name(TrialState state) {
  switch (state) {
    case TrialState::kWaiting:
      return "waiting";
    case TrialState::kRunning:
      return "running";
    case TrialState::kComplete:
      return "complete";
    case TrialState::kPruned:
      return "pruned";
    case TrialState::kFailed:
      return "failed";
  }
  return "?";
}

void Study::execute(const std::string& sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string problem = message ? message : sqlite3_errmsg(db_.get());
    sqlite3_free(message);
    throw Error(fmt::format("study database {}: {}", path_, problem));
  }
}

Study Study::create(const std::string& path, const StudyInfo& info, const SearchSpace& space) {
  if (std::filesystem::exists(path))
    throw Error(
        fmt::format("study database {} exists already: give --resume to go on with "
                    "that study, or another --study name",
                    path));
  Study study(path, open_database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 60));
  study.execute("PRAGMA journal_mode = WAL");
  study.execute("BEGIN IMMEDIATE");
  study.execute(kSchema);
  study.execute(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  Statement(study.db_.get(), path,
            "INSERT INTO study (id, name, metric, mode, config, created) VALUES (1, ?, ?, ?, ?, ?)")
      .bind(info.name)
      .bind(info.metric)
      .bind(std::string(info.maximize ? "max" : "min"))
      .bind(info.config.dump())
      .bind(info.created)
      .step();
  int64_t position = 0;
  Json written = OptionTraits<SearchSpace>::write(space);
  for (const auto& [name, distribution] : written.items())
    Statement(study.db_.get(), path,
              "INSERT INTO parameters (name, position, distribution) VALUES (?, ?, ?)")
        .bind(name)
        .bind(position++)
        .bind(distribution.dump())
        .step();
  study.execute("COMMIT");
  return study;
}

namespace {

// The metric and mode the study ranks trials by are those its config's tune section gives, as
// the study was created with them: a resumed study reads the config.
void check_metric(const StudyInfo& info) {
  const Json& tune = info.config["tune"];
  std::string mode = info.maximize ? "max" : "min";
  if (tune.value("metric", Json()) != Json(info.metric) || tune.value("mode", Json()) != Json(mode))
    throw Error(fmt::format(
        "table study: metric \"{}\", mode {} are not the config's tune.metric {}, tune.mode {}",
        info.metric, mode, show_value(tune.value("metric", Json())),
        show_value(tune.value("mode", Json()))));
}

}  // namespace

Study Study::open(const std::string& path, double busy_seconds) {
  if (!std::filesystem::exists(path)) throw Error(fmt::format("no study database at {}", path));
  Study study(path, open_database(path, SQLITE_OPEN_READWRITE, busy_seconds));
  try {
    Statement version(study.db_.get(), path, "PRAGMA user_version");
    version.step();
    Statement check(study.db_.get(), path, "PRAGMA quick_check");
    check.step();
    if (check.text(0) != "ok") throw Error("its integrity check says: " + check.text(0));
    if (version.integer(0) != kSchemaVersion)
      throw Error(fmt::format("its schema version is {}, this kiln reads {}", version.integer(0),
                              kSchemaVersion));
    // A trigger runs its own statements inside kiln's writes (one that deletes every trial's
    // values as a trial is added): kiln's schema has none, and no view either.
    Statement extra(study.db_.get(), path,
                    "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')");
    if (extra.step())
      throw Error(fmt::format("it holds a {} \"{}\", which kiln's schema does not have",
                              extra.text(0), extra.text(1)));
    check_metric(study.info());
    // The config's space is what the samplers draw from; the parameters table what the trials'
    // values were checked against: they must be one space.
    Json config_space = OptionTraits<SearchSpace>::write(
        SearchSpace::read(study.info().config["tune"]["space"], {"tune.space", nullptr}));
    if (config_space != OptionTraits<SearchSpace>::write(study.stored_space()))
      throw Error("table study: config's tune.space is not the space of table parameters");
  } catch (const DataError&) {
    throw;  // a damaged row, named with the file already
  } catch (const Error& e) {
    // Locked by another process's write (an open sqlite3 shell) for longer than busy_seconds:
    // the file is a study all the same.
    int code = sqlite3_errcode(study.db_.get());
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
      throw Error(
          fmt::format("{} is busy: another process has held a write lock on it for "
                      "more than {} s (an open sqlite3 shell, say); try again",
                      path, busy_seconds));
    throw Error(
        fmt::format("{} is not a kiln study database kiln can read ({}); it was left as "
                    "it is",
                    path, e.what()));
  }
  return study;
}

StudyInfo Study::info() const {
  Statement row(db_.get(), path_, "SELECT name, metric, mode, config, created, rowid FROM study");
  if (!row.step()) throw Error(fmt::format("study database {}: no study row", path_));
  CheckedRow checked(row, path_, "study", 5);
  std::string mode = checked.text(2);
  if (mode != "min" && mode != "max")
    checked.fail(fmt::format("mode is \"{}\", not min or max", mode));
  Json config = checked.json(3);
  // The base config with its tune section: the trials' configs and the space come from it.
  if (!config.is_object() || !config.contains("tune") || !config["tune"].is_object() ||
      !config["tune"].contains("space") || !config["tune"]["space"].is_object())
    checked.fail("config is not a JSON object with a \"tune\" object that holds a \"space\"");
  return {checked.text(0), checked.text(1), mode == "max", config, checked.text(4)};
}

SearchSpace Study::stored_space() const {
  Statement rows(db_.get(), path_,
                 "SELECT name, distribution, rowid FROM parameters ORDER BY position");
  Json written = Json::object();
  while (rows.step()) {
    CheckedRow row(rows, path_, "parameters", 2);
    std::string name = row.text(0);
    if (written.contains(name)) row.fail(fmt::format("parameter \"{}\" again", name));
    written[name] = row.json(1);
  }
  try {
    return SearchSpace::read(written, {"tune.space", nullptr});
  } catch (const ConfigError& e) {
    throw DataError(path_, -1, -1, fmt::format("table parameters: {}", e.what()));
  }
}

namespace {

// A trial_params row: a parameter of the space, a coordinate in its range, and the value that
// coordinate gives (as start_trial wrote them).
void check_trial_value(const SearchSpace& space, const std::string& name, const Json& value,
                       double coordinate, const CheckedRow& row) {
  const auto& parameters = space.parameters();
  auto found = std::find_if(parameters.begin(), parameters.end(),
                            [&](const Parameter& p) { return p.name == name; });
  if (found == parameters.end())
    row.fail(fmt::format("parameter \"{}\" is not in table parameters", name));
  const Distribution& d = *found->distribution;
  if (!(coordinate >= d.low() && coordinate <= d.high()))
    row.fail(fmt::format("coordinate {} of \"{}\" is outside its range [{}, {}]", coordinate, name,
                         d.low(), d.high()));
  if (d.value(coordinate) != value)
    row.fail(fmt::format("value {} of \"{}\" is not the one its coordinate {} gives ({})",
                         show_value(value), name, coordinate, show_value(d.value(coordinate))));
}

// Every trial holds a value of each parameter that applies to it, and of no other.
void check_trial_complete(const SearchSpace& space, const TrialRecord& trial,
                          const std::string& path) {
  for (const Parameter& p : space.parameters()) {
    bool active = space.active(p, trial.assignment), held = trial.assignment.count(p.name) > 0;
    if (active != held)
      throw DataError(
          path, -1, -1,
          fmt::format("table trial_params: trial {} {} \"{}\"", trial.number,
                      active ? "has no value of" : "has a value of the inactive", p.name));
  }
}

}  // namespace

std::string trial_folder(int64_t number) { return fmt::format("trial-{:04d}", number); }

int64_t Study::start_trial(const SearchSpace& space, const Assignment& assignment,
                           const std::string& now) {
  execute("BEGIN IMMEDIATE");
  try {
    Statement next(db_.get(), path_, "SELECT COALESCE(MAX(number) + 1, 0) FROM trials");
    next.step();
    int64_t number = next.integer(0);
    Statement(db_.get(), path_,
              "INSERT INTO trials (number, state, run_dir, started) VALUES (?, 'running', ?, ?)")
        .bind(number)
        .bind(trial_folder(number))
        .bind(now)
        .step();
    Json values = space.values(assignment);
    for (const auto& [name, coordinate] : assignment)
      Statement(db_.get(), path_,
                "INSERT INTO trial_params (trial, name, value, coordinate) VALUES (?, ?, ?, ?)")
          .bind(number)
          .bind(name)
          .bind(values.at(name).dump())
          .bind(coordinate)
          .step();
    execute("COMMIT");
    return number;
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

void Study::finish_trial(int64_t number, TrialState state, std::optional<double> value,
                         const std::string& error, const std::string& now) {
  Statement(db_.get(), path_,
            "UPDATE trials SET state = ?, value = ?, error = ?, finished = ? WHERE number = ?")
      .bind(std::string(state_name(state)))
      .bind(value)
      .bind(error)
      .bind(now)
      .bind(number)
      .step();
}

void Study::restart_trial(int64_t number) {
  Statement(db_.get(), path_,
            "UPDATE trials SET state = 'running', value = NULL, error = '', finished = '' "
            "WHERE number = ?")
      .bind(number)
      .step();
}

void Study::report(int64_t number, const ReportedValue& value) {
  Statement(db_.get(), path_,
            "INSERT OR REPLACE INTO intermediate_values (trial, step, epoch, value) "
            "VALUES (?, ?, ?, ?)")
      .bind(number)
      .bind(value.step)
      .bind(value.epoch)
      .bind(value.value)
      .step();
}

void Study::report(int64_t number, const std::vector<ReportedValue>& values) {
  if (values.empty()) return;
  execute("BEGIN IMMEDIATE");
  try {
    for (const ReportedValue& value : values) report(number, value);
    execute("COMMIT");
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

std::vector<TrialRecord> Study::trials() const {
  std::vector<TrialRecord> out;
  Statement rows(
      db_.get(), path_,
      "SELECT number, state, value, run_dir, error, started, finished, rowid FROM trials "
      "ORDER BY number");
  for (int64_t index = 0; rows.step(); ++index) {
    CheckedRow row(rows, path_, "trials", 7);
    TrialRecord& t = out.emplace_back();
    t.number = row.integer(0);
    // Trials are numbered 0, 1, 2, ... as they start; a gap or a made-up number is damage.
    if (t.number != index)
      row.fail(fmt::format("trial number {} where {} comes next", t.number, index));
    t.state = state_of(row.text(1), row);
    t.value = row.number_or_null(2);
    t.run_dir = row.text(3);
    if (t.run_dir != trial_folder(t.number))  // joined to the study's folder: no other path
      row.fail(fmt::format("run_dir is \"{}\", not {}", t.run_dir, trial_folder(t.number)));
    t.error = row.text(4);
    t.started = row.text(5);
    t.finished = row.text(6);
  }
  SearchSpace space = stored_space();
  // LEFT JOIN: a row naming no parameter is damage, not left out.
  Statement params(
      db_.get(), path_,
      "SELECT trial_params.trial, trial_params.name, value, coordinate, trial_params.rowid FROM "
      "trial_params LEFT JOIN parameters ON parameters.name = trial_params.name "
      "ORDER BY trial, position");
  while (params.step()) {
    CheckedRow row(params, path_, "trial_params", 4);
    TrialRecord& t = out[row.trial(0, out.size())];
    std::string name = row.text(1);
    Json value = row.json(2);
    double coordinate = row.number(3);
    check_trial_value(space, name, value, coordinate, row);
    t.values[name] = value;
    t.assignment[name] = coordinate;
  }
  for (const TrialRecord& t : out) check_trial_complete(space, t, path_);
  Statement reported(
      db_.get(), path_,
      "SELECT trial, step, epoch, value, rowid FROM intermediate_values ORDER BY trial, step");
  while (reported.step()) {
    CheckedRow row(reported, path_, "intermediate_values", 4);
    out[row.trial(0, out.size())].reported.push_back(
        {row.integer(1), row.number(2), row.number(3)});
  }
  return out;
}

TrialRecord Study::trial(int64_t number) const {
  std::vector<TrialRecord> all = trials();
  KILN_CHECK(number >= 0 && number < int64_t(all.size()), "study {} has no trial {}", path_,
             number);
  return all[size_t(number)];
}

std::vector<TrialView> trial_views(const std::vector<TrialRecord>& trials, bool maximize) {
  std::vector<TrialView> out;
  for (const TrialRecord& t : trials) {
    TrialView& view = out.emplace_back();
    view.number = t.number;
    view.state = t.state;
    view.assignment = t.assignment;
    std::optional<double> value = t.value;
    if (!value && t.state == TrialState::kPruned && !t.reported.empty())
      value = t.reported.back().value;
    if (value) view.loss = maximize ? -*value : *value;
  }
  return out;
}

}  // namespace kiln::tune
