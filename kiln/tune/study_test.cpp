// The study database: trials and their values survive closing and reopening (and a second
// connection sees the first's changes at once); a file that is no study, or is damaged, is
// reported and left as it is; an existing study is never created over.

#include "kiln/tune/study.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/tune/sqlite_rows.h"
#include "tests/support/temp_dir.h"

namespace kiln::tune {
namespace study_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

SearchSpace space() {
  return SearchSpace::read(
      parse_config_text("o: {type: choice, values: [adam, sgd]}\n"
                        "m: {type: uniform, low: 0, high: 1, when: {o: sgd}}\n",
                        "t.yaml", false),
      {"tune.space", nullptr});
}

StudyInfo info() {
  Json config = {{"seed", 3},
                 {"tune",
                  {{"space", OptionTraits<SearchSpace>::write(space())},
                   {"metric", "val/accuracy"},
                   {"mode", "max"}}}};
  return {"s1", "val/accuracy", true, config, "2026-11-26T23:00:00Z"};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Study, KeepsTrialsValuesAndReportsAcrossConnections) {
  testing::TempDir dir;
  std::string path = dir.file("study.db");
  SearchSpace s = space();
  Study study = Study::create(path, info(), s);
  int64_t first = study.start_trial(s, {{"o", 1}, {"m", 0.25}}, "t0");
  int64_t second = study.start_trial(s, {{"o", 0}}, "t1");
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  Study other = Study::open(path);  // as a trial's process opens it
  other.report(0, {100, 1.0, 0.5});
  other.report(0, {200, 2.0, 0.75});
  other.report(0, {200, 2.0, 0.8});  // a resumed trial reports its step again
  study.finish_trial(0, TrialState::kComplete, 0.8, "", "t2");
  study.finish_trial(1, TrialState::kFailed, std::nullopt, "exit status 1: boom", "t3");
  std::vector<TrialRecord> trials = Study::open(path).trials();
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].state, TrialState::kComplete);
  EXPECT_EQ(trials[0].values, Json({{"o", "sgd"}, {"m", 0.25}}));
  EXPECT_EQ(trials[0].assignment, (Assignment{{"o", 1}, {"m", 0.25}}));
  EXPECT_EQ(trials[0].value, 0.8);
  EXPECT_EQ(trials[0].run_dir, "trial-0000");
  ASSERT_EQ(trials[0].reported.size(), 2u);
  EXPECT_EQ(trials[0].reported[1].value, 0.8);
  EXPECT_EQ(trials[1].state, TrialState::kFailed);
  EXPECT_EQ(trials[1].error, "exit status 1: boom");
  EXPECT_FALSE(trials[1].value);
  StudyInfo read = other.info();
  EXPECT_EQ(read.metric, "val/accuracy");
  EXPECT_TRUE(read.maximize);
  EXPECT_EQ(read.config, info().config);
  // Samplers minimise: a maximised metric is negated.
  std::vector<TrialView> views = trial_views(trials, true);
  EXPECT_EQ(views[0].loss, -0.8);
  EXPECT_FALSE(views[1].loss);
}

// Runs `sql` on the study at `path` as a hand edit would, outside kiln.
void edit(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  // A hand edit need not honour the schema's CHECKs (sqlite3 with this pragma, or another tool).
  std::string unchecked = "PRAGMA ignore_check_constraints = ON; " + sql;
  int rc = sqlite3_exec(db, unchecked.c_str(), nullptr, nullptr, &message);
  std::string problem = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << problem;
}

// A study of two trials, one with reports, to damage.
std::string two_trials(const testing::TempDir& dir, const std::string& name) {
  std::string path = dir.file(name);
  SearchSpace s = space();
  Study study = Study::create(path, info(), s);
  study.start_trial(s, {{"o", 1}, {"m", 0.25}}, "t0");
  study.report(0, {100, 1.0, 0.5});
  study.finish_trial(0, TrialState::kComplete, 0.8, "", "t1");
  study.start_trial(s, {{"o", 0}}, "t2");
  return path;
}

std::string trials_error(const testing::TempDir& dir, const std::string& name,
                         const std::string& sql) {
  std::string path = two_trials(dir, name);
  edit(path, sql);
  try {
    Study::open(path).trials();
    return "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    return e.what();
  }
}

TEST(Study, EveryRowIsCheckedAndADamagedOneIsNamedByTableAndRowid) {
  testing::TempDir dir;
  // Text where a number goes read as 0 once, and 0 became the best trial.
  EXPECT_THAT(trials_error(dir, "a.db", "UPDATE trials SET value = 'high' WHERE number = 0"),
              HasSubstr("table trials, rowid 0: column value holds text where a number goes"));
  EXPECT_THAT(trials_error(dir, "b.db", "UPDATE trials SET number = 7 WHERE number = 1"),
              HasSubstr("table trials, rowid 7: trial number 7 where 1 comes next"));
  // What breaks the schema's CHECKs is refused by SQLite's own integrity check, naming the table.
  EXPECT_THAT(error_of([&] {
                std::string path = two_trials(dir, "c.db");
                edit(path, "UPDATE trials SET state = 'done' WHERE number = 1");
                Study::open(path);
              }),
              HasSubstr("CHECK constraint failed in trials"));
  EXPECT_THAT(trials_error(dir, "d.db", "UPDATE trials SET run_dir = '../../elsewhere'"),
              HasSubstr("run_dir is \"../../elsewhere\", not trial-0000"));
  EXPECT_THAT(
      trials_error(dir, "e.db", "INSERT INTO intermediate_values VALUES (5, 1, 1.0, 0.9)"),
      HasSubstr("table intermediate_values, rowid 2: column trial 5 names no trial of the study "
                "(it has 2)"));
  EXPECT_THAT(trials_error(dir, "f.db", "UPDATE intermediate_values SET epoch = 'one'"),
              HasSubstr("column epoch holds text where a number goes"));
  EXPECT_THAT(trials_error(dir, "g.db", "UPDATE trial_params SET value = '{\"cut'"),
              HasSubstr("table trial_params, rowid "));
  EXPECT_THAT(trials_error(dir, "h.db",
                           "UPDATE trial_params SET value = '" + std::string(100, '[') +
                               std::string(100, ']') + "' WHERE name = 'o'"),
              HasSubstr("column value is not JSON: nested more than 64 levels deep"));
  EXPECT_THAT(trials_error(dir, "i.db", "UPDATE trial_params SET coordinate = 'x'"),
              HasSubstr("column coordinate holds text where a number goes"));
  EXPECT_EQ(trials_error(dir, "j.db", "UPDATE trials SET value = 0.9 WHERE number = 0"),
            "no error");
}

// An outside campaign's finds: the parameters table was never read, a trial's value was not
// checked against its parameter, and a trial without values became the best.
TEST(Study, TheParametersAndEachTrialsValuesAreCheckedAgainstTheSpace) {
  testing::TempDir dir;
  int n = 0;
  auto error_after = [&](const std::string& sql) {
    std::string path = two_trials(dir, "s" + std::to_string(n++) + ".db");
    edit(path, sql);
    return error_of([&] { Study::open(path).trials(); });
  };
  EXPECT_THAT(error_after("UPDATE parameters SET distribution = '{' WHERE name = 'm'"),
              HasSubstr("table parameters, rowid 2: column distribution is not JSON"));
  EXPECT_THAT(error_after("UPDATE parameters SET distribution = '{\"type\": \"uniform\", "
                          "\"low\": 0, \"high\": 5, \"when\": {\"o\": \"sgd\"}}' "
                          "WHERE name = 'm'"),
              HasSubstr("config's tune.space is not the space of table parameters"));
  EXPECT_THAT(error_after("UPDATE trial_params SET value = '\"abc\"' WHERE name = 'm'"),
              HasSubstr("table trial_params, rowid 1: value \"abc\" of \"m\" is not the one its "
                        "coordinate 0.25 gives (0.25)"));
  EXPECT_THAT(error_after("UPDATE trial_params SET coordinate = 7 WHERE name = 'o'"),
              HasSubstr("coordinate 7 of \"o\" is outside its range [0, 1]"));
  EXPECT_THAT(error_after("UPDATE trial_params SET name = 'lr' WHERE name = 'm'"),
              HasSubstr("parameter \"lr\" is not in table parameters"));
  EXPECT_THAT(error_after("INSERT INTO trials (number, state, value, run_dir, started) "
                          "VALUES (2, 'complete', 0.99, 'trial-0002', 't')"),
              HasSubstr("table trial_params: trial 2 has no value of \"o\""));
  EXPECT_THAT(error_after("DELETE FROM trial_params WHERE name = 'm'"),
              HasSubstr("trial 0 has no value of \"m\""));
  // SQLite keeps text past a NUL, which a C string hides.
  EXPECT_THAT(
      error_after("UPDATE trial_params SET value = '0.25' || x'00' || 'junk' WHERE name = 'm'"),
      HasSubstr("column value holds a NUL byte at 4"));
  EXPECT_THAT(error_after("INSERT INTO trial_params VALUES (1, 'm', '0.5', 0.5)"),
              HasSubstr("trial 1 has a value of the inactive \"m\""));
}

TEST(Study, ADamagedStudyRowIsNamedWhenTheStudyIsOpened) {
  testing::TempDir dir;
  std::string path = two_trials(dir, "study.db");
  edit(path, "UPDATE study SET config = '[1, 2]'");
  EXPECT_THAT(
      error_of([&] { Study::open(path); }),
      AllOf(HasSubstr(path), HasSubstr("table study, rowid 1: config is not a JSON object")));
  // Without the tune section `kiln tune show` and a resumed study have no space (exit 3 before).
  edit(path, "UPDATE study SET config = '{\"tune\": {}}'");
  EXPECT_THAT(error_of([&] { Study::open(path); }),
              HasSubstr("config is not a JSON object with a \"tune\" object that holds a "
                        "\"space\""));
  edit(path, "UPDATE study SET config = '" + info().config.dump() + "', name = x'ff00'");
  EXPECT_THAT(error_of([&] { Study::open(path); }),
              HasSubstr("table study, rowid 1: column name holds bytes where text goes"));
}

// Campaign finds: each was opened and used as if nothing had changed.
TEST(Study, ATriggerAViewOrAMetricTheConfigDoesNotRankByIsRefused) {
  testing::TempDir dir;
  std::string path = two_trials(dir, "study.db");
  edit(path, "UPDATE study SET metric = 'val/loss'");
  EXPECT_THAT(error_of([&] { Study::open(path); }),
              HasSubstr("table study: metric \"val/loss\", mode max are not the config's "
                        "tune.metric \"val/accuracy\", tune.mode \"max\""));
  edit(path, "UPDATE study SET metric = 'val/accuracy', mode = 'min'");
  EXPECT_THAT(error_of([&] { Study::open(path); }), HasSubstr("mode min are not"));
  edit(path, "UPDATE study SET mode = 'max'");
  Study::open(path);
  edit(path, "CREATE TRIGGER wipe AFTER INSERT ON trials BEGIN DELETE FROM trial_params; END");
  EXPECT_THAT(error_of([&] { Study::open(path); }),
              AllOf(HasSubstr(path), HasSubstr("it holds a trigger \"wipe\", which kiln's "
                                               "schema does not have")));
  edit(path, "DROP TRIGGER wipe; CREATE VIEW best AS SELECT * FROM trials");
  EXPECT_THAT(error_of([&] { Study::open(path); }), HasSubstr("a view \"best\""));
}

TEST(Study, APrunedTrialCountsWithItsLastReportedValue) {
  testing::TempDir dir;
  SearchSpace s = space();
  Study study = Study::create(dir.file("study.db"), info(), s);
  study.start_trial(s, {{"o", 0}}, "t0");
  study.report(0, {1, 1, 0.6});
  study.finish_trial(0, TrialState::kPruned, std::nullopt, "", "t1");
  EXPECT_EQ(trial_views(study.trials(), false)[0].loss, 0.6);
  study.restart_trial(0);
  EXPECT_EQ(study.trial(0).state, TrialState::kRunning);
}

// A program's reports of one read are written together: all of them, or none when one fails.
TEST(Study, ReportsWrittenTogetherAreAllKeptOrNoneIs) {
  testing::TempDir dir;
  SearchSpace s = space();
  Study study = Study::create(dir.file("study.db"), info(), s);
  study.start_trial(s, {{"o", 0}}, "t0");
  std::vector<ReportedValue> many;
  for (int64_t step = 0; step < 10000; ++step)
    many.push_back({step, double(step), 1.0 / (step + 1)});
  study.report(0, many);
  std::vector<ReportedValue> kept = study.trial(0).reported;
  ASSERT_EQ(kept.size(), 10000u);
  EXPECT_EQ(kept.back().step, 9999);
  // SQLite stores a NaN as NULL, which the table refuses: the value before it goes too.
  std::vector<ReportedValue> broken{{20000, 20000, 0.5}, {20001, 20001, std::nan("")}};
  EXPECT_THAT(error_of([&] { study.report(0, broken); }), HasSubstr(dir.file("study.db")));
  EXPECT_EQ(study.trial(0).reported.size(), 10000u);
  study.report(0, std::vector<ReportedValue>{{20000, 20000, 0.5}});  // and the study goes on
  EXPECT_EQ(study.trial(0).reported.size(), 10001u);
}

TEST(Study, AChangeWhileAnotherProcessWritesWaitsThenFailsNamingTheFile) {
  testing::TempDir dir;
  std::string path = dir.file("study.db");
  Study::create(path, info(), space());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Study study = Study::open(path, 0);  // reading goes on while another connection writes
  EXPECT_TRUE(study.trials().empty());
  EXPECT_THAT(error_of([&] {
                study.start_trial(space(), {{"o", 0}}, "t");
              }),
              AllOf(HasSubstr(path), HasSubstr("locked")));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(study.start_trial(space(), {{"o", 0}}, "t"), 0);
}

// The board once waited 60 s for each study another process held locked, every worker of it
// held so, and then called the study "not a kiln study database".
TEST(Study, AStudyLockedLongerThanTheWaitIsBusyNotDamaged) {
  testing::TempDir dir;
  std::string path = dir.file("study.db");
  Study::create(path, info(), space());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  // As an open sqlite3 shell in the middle of a change: no reader gets in.
  ASSERT_EQ(
      sqlite3_exec(other, "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE", nullptr, nullptr, nullptr),
      SQLITE_OK);
  EXPECT_THAT(error_of([&] { Study::open(path, 0.05); }),
              AllOf(HasSubstr(path + " is busy: another process has held a write lock on it"),
                    Not(HasSubstr("not a kiln study"))));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(Study::open(path, 0.05).trials().empty());
}

// A config of 50 MB of empty objects once cost the board 2 GB on every request.
TEST(Study, AJsonColumnOfMoreValuesThanAnyConfigHoldsIsRefusedUnbuilt) {
  testing::TempDir dir;
  std::string path = two_trials(dir, "study.db");
  std::string many = "[";
  for (size_t i = 0; i < kMaxRowJsonValues; ++i) many += "{},";
  many += "{}]";
  Json config = info().config;
  config["padding"] = "PLACE";
  std::string text = config.dump();
  text.replace(text.find("\"PLACE\""), 7, many);
  edit(path, "UPDATE study SET config = '" + text + "'");
  EXPECT_THAT(error_of([&] { Study::open(path); }),
              AllOf(HasSubstr("table study, rowid 1: column config is not JSON: more than 1048576 "
                              "values and keys")));
}

TEST(Study, NeverCreatesOverAStudyAndReportsWhatIsNoStudy) {
  testing::TempDir dir;
  std::string path = dir.file("study.db");
  Study::create(path, info(), space());
  EXPECT_THAT(error_of([&] { Study::create(path, info(), space()); }),
              AllOf(HasSubstr("exists already"), HasSubstr("--resume")));
  EXPECT_THAT(error_of([&] { Study::open(dir.file("none.db")); }), HasSubstr("no study database"));
  std::string text = dir.file("text.db");
  std::ofstream(text) << "these are not the bytes of a database, but they are long enough to be "
                         "read as one by someone who does not check them first\n";
  EXPECT_THAT(error_of([&] { Study::open(text); }),
              AllOf(HasSubstr(text), HasSubstr("not a kiln study database")));
  EXPECT_EQ(read_text_file(text).substr(0, 10), "these are ");
  // A database, but not a study.
  std::string other = dir.file("other.db");
  sqlite3* db = nullptr;
  sqlite3_open(other.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THAT(error_of([&] { Study::open(other); }), HasSubstr("schema version is 0"));
  // A study whose pages were overwritten in the middle.
  {
    std::fstream damage(path, std::ios::in | std::ios::out | std::ios::binary);
    damage.seekp(0, std::ios::end);
    auto size = int64_t(damage.tellp());
    ASSERT_GT(size, 8192);
    damage.seekp(2048);
    std::string junk(size_t(size - 4096), '\x5a');
    damage.write(junk.data(), std::streamsize(junk.size()));
  }
  EXPECT_THAT(error_of([&] { Study::open(path).trials(); }), HasSubstr(path));
}

}  // namespace study_test
}  // namespace kiln::tune
