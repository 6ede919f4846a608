#include "kiln/tune/study.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

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
  int type(int column) const { return sqlite3_column_type(statement_, column); }
  const char* column_name(int column) const { return sqlite3_column_name(statement_, column); }
  /// The whole text, NUL bytes included (a C string would end at the first).
  std::string text(int column) const {
    const unsigned char* at = sqlite3_column_text(statement_, column);
    if (!at) return "";
    return std::string(reinterpret_cast<const char*>(at),
                       static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
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

// The columns of one row a query read, each checked for the type the schema gives it before it is
// used: SQLite keeps whatever a hand edit stored (text in a REAL column reads as 0 otherwise, and
// a made-up trial number indexes past the trials). A problem is a DataError naming the file, the
// table and the row.
class CheckedRow {
 public:
  /// `rowid_column`: where the query selected the row's rowid, which names the row in messages.
  CheckedRow(const Statement& row, const std::string& path, const char* table, int rowid_column)
      : row_(row), path_(path), table_(table), rowid_(row.integer(rowid_column)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_, -1, -1,
                    fmt::format("table {}, rowid {}: {}; the study was left as it is", table_,
                                rowid_, problem));
  }
  int64_t integer(int column) const {
    expect(column, row_.type(column) == SQLITE_INTEGER, "a whole number");
    return row_.integer(column);
  }
  double number(int column) const {
    int type = row_.type(column);
    expect(column, type == SQLITE_INTEGER || type == SQLITE_FLOAT, "a number");
    double value = row_.real(column);
    if (!std::isfinite(value))
      fail(fmt::format("{} is {}, not a finite number", name(column), value));
    return value;
  }
  std::optional<double> number_or_null(int column) const {
    if (row_.null(column)) return std::nullopt;
    return number(column);
  }
  std::string text(int column) const {
    expect(column, row_.type(column) == SQLITE_TEXT, "text");
    std::string text = row_.text(column);
    // kiln writes no NUL; text read as a C string would drop what follows one unseen.
    if (text.find('\0') != std::string::npos)
      fail(fmt::format("{} holds a NUL byte at {}", name(column), text.find('\0')));
    return text;
  }
  Json json(int column) const {
    try {
      return parse_json_text(text(column));
    } catch (const JsonTextError& e) {
      fail(fmt::format("{} is not JSON: {}", name(column), e.what()));
    }
  }
  /// A trial number naming one of the `count` trials read before.
  size_t trial(int column, size_t count) const {
    int64_t number = integer(column);
    if (number < 0 || uint64_t(number) >= count)
      fail(fmt::format("{} {} names no trial of the study (it has {})", name(column), number,
                       count));
    return size_t(number);
  }

 private:
  std::string name(int column) const { return fmt::format("column {}", row_.column_name(column)); }
  void expect(int column, bool holds, const char* what) const {
    static const char* const kTypes[] = {"?",    "a whole number", "a number",
                                         "text", "bytes",          "NULL"};
    int type = row_.type(column);
    if (!holds)
      fail(fmt::format("{} holds {} where {} goes", name(column),
                       kTypes[type >= 1 && type <= 5 ? type : 0], what));
  }

  const Statement& row_;
  const std::string& path_;
  const char* table_;
  int64_t rowid_;
};

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
