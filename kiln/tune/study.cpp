#include "kiln/tune/study.h"

#include <fmt/format.h>

#include <filesystem>

#include "kiln/core/error.h"

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

// One prepared statement, its parameters bound in order.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    check(sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr));
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement& bind(int64_t value) {
    return checked(sqlite3_bind_int64(statement_, ++bound_, value));
  }
  Statement& bind(double value) {
    return checked(sqlite3_bind_double(statement_, ++bound_, value));
  }
  Statement& bind(const std::string& text) {
    return checked(
        sqlite3_bind_text(statement_, ++bound_, text.c_str(), int(text.size()), SQLITE_TRANSIENT));
  }
  Statement& bind(std::optional<double> value) {
    if (value) return bind(*value);
    return checked(sqlite3_bind_null(statement_, ++bound_));
  }
  /// True while a row is there to read.
  bool step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    check(rc == SQLITE_DONE ? SQLITE_OK : rc);
    return false;
  }
  int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double real(int column) const { return sqlite3_column_double(statement_, column); }
  bool null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const unsigned char* at = sqlite3_column_text(statement_, column);
    return at ? reinterpret_cast<const char*>(at) : "";
  }

 private:
  Statement& checked(int rc) {
    check(rc);
    return *this;
  }
  void check(int rc) const {
    if (rc != SQLITE_OK)
      throw Error(fmt::format("study database {}: {}", path_, sqlite3_errmsg(db_)));
  }

  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* statement_ = nullptr;
  int bound_ = 0;
};

sqlite3* connect(const std::string& path, int flags, double busy_seconds) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string problem = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw Error(fmt::format("study database {}: {}", path, problem));
  }
  // Trials report from their own processes: wait for a writer rather than fail.
  sqlite3_busy_timeout(db, int(busy_seconds * 1000));
  return db;
}

TrialState state_of(const std::string& name, const std::string& path) {
  for (TrialState s :
       {TrialState::kRunning, TrialState::kComplete, TrialState::kPruned, TrialState::kFailed})
    if (name == state_name(s)) return s;
  throw Error(fmt::format("study database {}: unknown trial state \"{}\"", path, name));
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
  Study study(path, connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 60));
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

Study Study::open(const std::string& path, double busy_seconds) {
  if (!std::filesystem::exists(path)) throw Error(fmt::format("no study database at {}", path));
  Study study(path, connect(path, SQLITE_OPEN_READWRITE, busy_seconds));
  try {
    Statement version(study.db_.get(), path, "PRAGMA user_version");
    version.step();
    Statement check(study.db_.get(), path, "PRAGMA quick_check");
    check.step();
    if (check.text(0) != "ok") throw Error("its integrity check says: " + check.text(0));
    if (version.integer(0) != kSchemaVersion)
      throw Error(fmt::format("its schema version is {}, this kiln reads {}", version.integer(0),
                              kSchemaVersion));
    study.info();
  } catch (const Error& e) {
    throw Error(
        fmt::format("{} is not a kiln study database kiln can read ({}); it was left as "
                    "it is",
                    path, e.what()));
  }
  return study;
}

StudyInfo Study::info() const {
  Statement row(db_.get(), path_, "SELECT name, metric, mode, config, created FROM study");
  if (!row.step()) throw Error(fmt::format("study database {}: no study row", path_));
  return {row.text(0), row.text(1), row.text(2) == "max", Json::parse(row.text(3)), row.text(4)};
}

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

std::vector<TrialRecord> Study::trials() const {
  std::vector<TrialRecord> out;
  Statement rows(db_.get(), path_,
                 "SELECT number, state, value, run_dir, error, started, finished FROM trials "
                 "ORDER BY number");
  while (rows.step()) {
    TrialRecord& t = out.emplace_back();
    t.number = rows.integer(0);
    t.state = state_of(rows.text(1), path_);
    if (!rows.null(2)) t.value = rows.real(2);
    t.run_dir = rows.text(3);
    t.error = rows.text(4);
    t.started = rows.text(5);
    t.finished = rows.text(6);
  }
  Statement params(db_.get(), path_,
                   "SELECT trial_params.trial, trial_params.name, value, coordinate FROM "
                   "trial_params JOIN parameters ON parameters.name = trial_params.name "
                   "ORDER BY trial, position");
  while (params.step()) {
    TrialRecord& t = out.at(size_t(params.integer(0)));
    t.values[params.text(1)] = Json::parse(params.text(2));
    t.assignment[params.text(1)] = params.real(3);
  }
  Statement reported(
      db_.get(), path_,
      "SELECT trial, step, epoch, value FROM intermediate_values ORDER BY trial, step");
  while (reported.step())
    out.at(size_t(reported.integer(0)))
        .reported.push_back({reported.integer(1), reported.real(2), reported.real(3)});
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
