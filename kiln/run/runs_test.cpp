// `kiln runs` over a fixture tree: a finished run, a run still training (no summary yet), a
// damaged one (run.json cut short, config.yaml not YAML, a metrics row cut short) and a folder
// that is not a run. Damage is listed with the run, never stops the listing.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "kiln/core/error.h"
#include "kiln/core/folder_lock.h"
#include "kiln/core/text_file.h"
#include "kiln/run/run_info.h"
#include "kiln/run/run_notes.h"
#include "kiln/run/run_query.h"
#include "kiln/run/run_table.h"
#include "tests/support/temp_dir.h"

namespace kiln::run {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

constexpr const char* kHeader = "step,epoch,split,metric,value,wall_time\n";
// The start of every config.yaml kiln writes (a run's differs in its optimizer).
constexpr const char* kConfigStart =
    "version: 1\nname: fashion\ndata: {batch_size: 32}\nmodel: {type: mlp}\ntrain: {max: 1 "
    "epochs}\n";

class RunsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    finished_ = make("fashion/20261101-100000",
                     R"({"status": "finished", "start_time": "2026-11-01T10:00:00Z",
                         "end_time": "2026-11-01T11:02:03Z"})",
                     std::string(kConfigStart) + "optimizer: {type: sgd, lr: 0.1}\n",
                     std::string(kHeader) + "100,1,train,loss,0.5,1\n100,1,val,accuracy,0.91,1\n");
    write(finished_ + "/summary.json",
          R"({"final": {"val/accuracy": 0.91, "val/loss": 0.3, "train/loss": 0.5,
              "val/confusion_matrix/true_0/pred_0": 12}, "best": {"metric": "val/accuracy",
              "value": 0.92, "step": 80}, "steps": 100})");
    running_ = make("fashion/20261102-100000",
                    R"({"status": "running", "start_time": "2026-11-02T10:00:00Z"})",
                    std::string(kConfigStart) + "optimizer: {type: sgd, lr: 0.01}\n",
                    std::string(kHeader) + "10,0.1,train,loss,2.0,1\n20,0.2,train,loss,1.5,1\n" +
                        "20,0.2,val,accuracy,0.7,1\n");
    damaged_ = make("mnist/20261103-100000", R"({"status": "fin)", "name: [unclosed\n",
                    std::string(kHeader) + "5,0.1,train,loss,0.9,1\n6,0.2,tra");
    fs::create_directories(dir_.file("runs/fashion/20261101-100000/checkpoints/step-1"));
    write(dir_.file("runs/fashion/20261101-100000/checkpoints/step-1/run.json"), "{}");
    fs::create_directories(dir_.file("runs/empty_folder"));
  }

  std::string make(const std::string& name, const std::string& record, const std::string& config,
                   const std::string& metrics) {
    std::string path = dir_.file("runs/" + name);
    fs::create_directories(path);
    write(path + "/run.json", record);
    write(path + "/config.yaml", config);
    write(path + "/metrics.csv", metrics);
    return path;
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::vector<RunInfo> all() {
    std::vector<RunInfo> runs;
    for (const std::string& path : find_runs(dir_.file("runs"))) runs.push_back(read_run(path));
    return runs;
  }
  static std::vector<std::string> ids(const std::vector<RunInfo>& runs) {
    std::vector<std::string> out;
    for (const RunInfo& run : runs) out.push_back(run.id);
    return out;
  }

  testing::TempDir dir_;
  std::string finished_, running_, damaged_;
};

TEST_F(RunsTree, FindsEveryRunFolderButNotInsideOne) {
  EXPECT_THAT(find_runs(dir_.file("runs")), ElementsAre(finished_, running_, damaged_));
  EXPECT_THAT(find_runs(finished_), ElementsAre(finished_)) << "a run given as the root";
  EXPECT_THROW(find_runs(dir_.file("nowhere")), UsageError);
}

TEST_F(RunsTree, AFinishedRunIsReadFromItsFiles) {
  RunInfo run = read_run(finished_);
  EXPECT_EQ(run.name, "fashion");
  EXPECT_EQ(run.id, "20261101-100000");
  EXPECT_EQ(run.status, "finished");
  EXPECT_EQ(run.duration_s, 3723);
  EXPECT_EQ(run.steps, 100);
  ASSERT_TRUE(run.best.has_value());
  EXPECT_EQ(run.best->metric, "val/accuracy");
  EXPECT_EQ(run.best->value, 0.92);
  EXPECT_EQ(run.final.at("val/accuracy"), 0.91);
  EXPECT_EQ(run.hparams.at("optimizer.lr"), Json(0.1));
  EXPECT_TRUE(run.problems.empty());
}

TEST_F(RunsTree, ARunStillTrainingHasItsLatestValuesFromMetricsCsv) {
  RunInfo run = read_run(running_);
  EXPECT_EQ(run.status, "running");
  EXPECT_EQ(run.duration_s, -1);
  EXPECT_EQ(run.steps, 20);
  EXPECT_EQ(run.final.at("train/loss"), 1.5);
  EXPECT_EQ(run.final.at("val/accuracy"), 0.7);
  EXPECT_FALSE(run.best.has_value());
}

TEST_F(RunsTree, ADamagedRunIsListedWithItsProblemsNamingTheFiles) {
  RunInfo run = read_run(damaged_);
  EXPECT_EQ(run.name, "mnist") << "from the parent folder, as config.yaml cannot be read";
  EXPECT_EQ(run.status, "");
  EXPECT_EQ(run.steps, 5) << "the row cut short is left out";
  ASSERT_EQ(run.problems.size(), 3u);
  EXPECT_THAT(run.problems[0], HasSubstr("run.json is not a JSON object"));
  EXPECT_THAT(run.problems[1], HasSubstr("config.yaml"));
  EXPECT_EQ(run.problems[2], "metrics.csv ends in a row cut short");
  std::string table = runs_table(all());
  EXPECT_THAT(table, HasSubstr("damaged (!)"));
  EXPECT_THAT(table, HasSubstr("(!) " + damaged_ + ": run.json is not a JSON object"));
}

// A config.yaml of deeply nested long keys (1,000 bytes a key, 40 levels, 2,000 leaves: 80 MB
// of dotted paths from a 0.1 MB file) once took gigabytes to list: its settings are left out
// and the run listed with the problem.
TEST_F(RunsTree, AConfigOfTooManyOrTooLongSettingsIsAProblemNotAListing) {
  std::string key(1000, 'k');
  std::string yaml = std::string(kConfigStart) + "optimizer: {type: sgd}\n";
  std::string indent;
  for (int level = 0; level < 40; ++level) {
    yaml += indent + key + std::to_string(level) + ":\n";
    indent += " ";
  }
  for (int leaf = 0; leaf < 2000; ++leaf) yaml += indent + "v" + std::to_string(leaf) + ": 1\n";
  write(finished_ + "/config.yaml", yaml);
  RunInfo run = read_run(finished_);
  EXPECT_TRUE(run.hparams.empty());
  ASSERT_FALSE(run.problems.empty());
  EXPECT_THAT(run.problems.back(), HasSubstr("config.yaml has more than 20000 settings"));
  EXPECT_EQ(run.name, "fashion");
  EXPECT_EQ(read_run(running_).hparams.at("optimizer.lr"), Json(0.01)) << "the others as ever";
}

// Hand-edited run files of the wrong types once ended `kiln runs` (exit 3) and dropped the good
// runs from the board: now each is a problem of its run, and the others are listed as ever.
TEST_F(RunsTree, RunFilesOfTheWrongTypesAreProblemsOfTheirRunOnly) {
  write(running_ + "/run.json", R"({"status": 3, "start_time": ["2026"]})");
  write(finished_ + "/summary.json", R"({"steps": "many", "best": [], "final": 1})");
  RunInfo running = read_run(running_);
  EXPECT_EQ(running.status, "");
  EXPECT_THAT(running.problems, ElementsAre("run.json: \"status\" is number, not text",
                                            "run.json: \"start_time\" is array, not text"));
  RunInfo finished = read_run(finished_);
  EXPECT_EQ(finished.steps, 100) << "from metrics.csv, as summary.json's is not a number";
  EXPECT_THAT(finished.problems,
              ElementsAre("summary.json: \"steps\" is \"many\", not a whole number >= 0",
                          "summary.json: \"best\" is not {metric: text, value: number}",
                          "summary.json: \"final\" is not {tag: number}"));
  fs::remove(damaged_ + "/run.json");
  fs::create_directory(damaged_ + "/run.json");
  EXPECT_THAT(read_run(damaged_).problems[0], HasSubstr("run.json: is a folder, not a file"));
  write(running_ + "/run.json", std::string("{\"status\": \"runn\xff\"}"));
  EXPECT_THAT(read_run(running_).problems[0], HasSubstr("run.json is not a JSON object"));
  EXPECT_EQ(all().size(), 3u);
}

// A run killed with SIGKILL says `running` in its run.json forever; no process holds its lock.
TEST_F(RunsTree, ARunWhoseLockNoProcessHoldsWasKilled) {
  write(running_ + "/lock", "12345\n");
  EXPECT_EQ(read_run(running_).status, "killed");
  {
    FolderLock held(running_, "run is being trained");
    EXPECT_EQ(read_run(running_).status, "running");
  }
  EXPECT_EQ(read_run(finished_).status, "finished") << "only a run that says running";
}

// A run trained on another machine, over a filesystem that does not carry its lock here: its
// heartbeat (the lock file's time) says whether it still runs.
TEST_F(RunsTree, ARunOfAnotherMachineIsKilledWhenItsHeartbeatStops) {
  auto beat_ago = [&](std::chrono::seconds age) {
    fs::last_write_time(running_ + "/lock", fs::file_time_type::clock::now() - age);
  };
  write(running_ + "/lock", "12345 another-machine-" + this_host() + "\n");
  beat_ago(std::chrono::seconds(20));
  EXPECT_EQ(read_run(running_).status, "running");
  beat_ago(FolderLock::kPresumedDeadAfter + std::chrono::seconds(5));
  EXPECT_EQ(read_run(running_).status, "killed");
  // On its own machine the lock alone tells, however fresh the beat.
  write(running_ + "/lock", "12345 " + this_host() + "\n");
  EXPECT_EQ(read_run(running_).status, "killed");
}

TEST(FolderLockTest, TheHolderBeatsAndIsNamedWithItsHost) {
  testing::TempDir dir;
  FolderLock held(dir.path(), "busy", std::chrono::milliseconds(1));
  std::string lock = dir.path() + "/lock";
  auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(lock, long_ago);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (fs::last_write_time(lock) == long_ago && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_GT(fs::last_write_time(lock), long_ago) << "no beat";
  EXPECT_EQ(FolderLock::holder(dir.path()), std::to_string(::getpid()) + " on " + this_host());
  try {
    FolderLock second(dir.path(), "busy");
    FAIL() << "locked twice";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(pid " + std::to_string(::getpid()) + " on " + this_host()));
  }
}

// A campaign's finds: a finished run's metrics.csv emptied, cut short or given another header,
// its rows damaged, its config.yaml emptied or cut short, were all listed as sound.
TEST_F(RunsTree, AFinishedRunsMetricsAndConfigAreCheckedThoughItsSummaryGivesTheValues) {
  auto problems_with = [&](const std::string& file, const std::string& text) {
    std::string saved = read_text_file(finished_ + "/" + file);
    write(finished_ + "/" + file, text);
    std::vector<std::string> problems = read_run(finished_).problems;
    write(finished_ + "/" + file, saved);
    return problems;
  };
  EXPECT_THAT(read_run(finished_).problems, ElementsAre());
  std::string good = std::string(kHeader) + "100,1,train,loss,0.5,1\n";
  EXPECT_THAT(problems_with("metrics.csv", ""), ElementsAre(HasSubstr("its header is \"\"")));
  EXPECT_THAT(problems_with("metrics.csv", "a,b,c,d,e,f\n100,1,train,loss,0.5,1\n"),
              ElementsAre(HasSubstr("its header is \"a,b,c,d,e,f\", not step,epoch,")));
  EXPECT_THAT(problems_with("metrics.csv", good + "100,1,val,accur"),
              ElementsAre("metrics.csv ends in a row cut short"));
  EXPECT_THAT(problems_with("metrics.csv", kHeader),
              ElementsAre("metrics.csv holds no rows, though summary.json counts 100 steps"));
  for (const auto& [row, problem] : std::vector<std::pair<std::string, std::string>>{
           {"250.5,1,val,loss,0.5,1", "step \"250.5\" is not a whole number >= 0"},
           {"18446744073709551616,1,val,loss,0.5,1", "is not a whole number >= 0"},
           {"100,1,val,loss,0x10,1", "value \"0x10\" is not a number"},
           {"100,1,val,loss,,1", "value \"\" is not a number"},
           {"100,1,val,loss,0.5", "a row of 5 cells, not 6"},
           {std::string("100,1,v\0l,loss,0.5,1", 21), "not UTF-8 text"},
           {"100,1,val,\xc0\xafloss,0.5,1", "not UTF-8 text"}})
    EXPECT_THAT(problems_with("metrics.csv", good + row + "\n"),
                ElementsAre(AllOf(StartsWith(fmt::format("metrics.csv, byte {}: ", good.size())),
                                  HasSubstr(problem))))
        << row;
  EXPECT_THAT(problems_with("metrics.csv", good + "100,1,val,loss,nan,1\n100,1,,lr,-inf,1\n"),
              ElementsAre())
      << "nan and inf are written so, and a tag without a split";
  // A row longer than the part read: not mistaken for a file without rows.
  EXPECT_THAT(
      problems_with("metrics.csv", good + "100,1,val," + std::string(70000, 'm') + ",0.5,1\n"),
      ElementsAre(HasSubstr("hold no whole row (a row longer than that?)")));
  EXPECT_THAT(problems_with("summary.json",
                            R"({"steps": 100, "best": {"metric": "val/loss", "value": 1,
                                "step": 99999}})"),
              ElementsAre("summary.json: the best value's step 99999 is past the run's 100 steps"));
  EXPECT_THAT(problems_with("run.json", R"({"status": "finished",
      "start_time": "2026-11-01T10:00:00Z", "end_time": "2026-11-01T09:00:00Z"})"),
              ElementsAre("run.json: \"end_time\" is before \"start_time\""));
  EXPECT_THAT(problems_with("config.yaml", ""), ElementsAre(HasSubstr("not a whole config")));
  // Cut short, and still YAML, but without its last newline.
  EXPECT_THAT(problems_with("config.yaml", std::string(kConfigStart) + "optimizer: {type: s}"),
              ElementsAre(HasSubstr("not a whole config as kiln writes it")));
  EXPECT_THAT(
      problems_with("run.json", R"({"status": "finished", "start_time": "2026-13-45T99:99:99Z"})"),
      ElementsAre(HasSubstr("run.json: \"start_time\" is \"2026-13-45T99:99:99Z\", not a UTC")));
}

// A campaign's find: `"status": "finished\u0000x"` ended the table at the NUL, and the rest of the
// runs and the problems with it.
TEST_F(RunsTree, TheTableShowsControlBytesEscapedAndListsEveryRun) {
  write(finished_ + "/run.json", R"({"status": "finished\u0000x"})");
  std::string table = runs_table(all());
  EXPECT_EQ(table.find('\0'), std::string::npos);
  EXPECT_THAT(table, HasSubstr("finished\\x00x"));
  EXPECT_THAT(table, HasSubstr("20261102-100000"));
  EXPECT_THAT(table, HasSubstr("(!) " + finished_ + ": run.json: \"status\" is"));
}

TEST_F(RunsTree, MissingFilesAreProblemsToo) {
  fs::remove(running_ + "/run.json");
  fs::remove(running_ + "/config.yaml");
  RunInfo run = read_run(running_);
  EXPECT_THAT(run.problems, ElementsAre("run.json is missing", "config.yaml is missing"));
  EXPECT_EQ(run.steps, 20);
}

// An outside campaign's finds: a finished run without its summary or metrics was listed as
// sound, and a metrics.csv that is a FIFO hung `kiln report` (nothing ever writes to it).
TEST_F(RunsTree, AFinishedRunWithoutItsSummaryOrMetricsAndAMetricsFifoAreProblems) {
  fs::remove(finished_ + "/summary.json");
  fs::remove(finished_ + "/metrics.csv");
  EXPECT_THAT(read_run(finished_).problems,
              ElementsAre("metrics.csv is missing",
                          "summary.json is missing, though run.json says finished"));
  ASSERT_EQ(::mkfifo((running_ + "/metrics.csv.fifo").c_str(), 0644), 0);
  fs::remove(running_ + "/metrics.csv");
  fs::rename(running_ + "/metrics.csv.fifo", running_ + "/metrics.csv");
  RunInfo running = read_run(running_);  // returns: the FIFO is not opened for a blocking read
  ASSERT_EQ(running.problems.size(), 1u);
  EXPECT_THAT(running.problems[0], HasSubstr("metrics.csv"));
  EXPECT_THAT(running.problems[0], HasSubstr("not a regular file"));
  fs::remove(running_ + "/metrics.csv");
  fs::create_symlink("/dev/zero", running_ + "/metrics.csv");
  EXPECT_THAT(read_run(running_).problems[0], HasSubstr("not a regular file"));
}

TEST_F(RunsTree, AnUnknownStatusANegativeStepCountAndATextValueAreProblems) {
  write(finished_ + "/run.json", R"({"status": "FINISHED", "start_time": "2026-11-01T10:00:00Z"})");
  write(finished_ + "/summary.json",
        R"({"final": {"val/accuracy": "high", "val/loss": null}, "steps": -250})");
  EXPECT_THAT(read_run(finished_).problems,
              ElementsAre("run.json: \"status\" is \"FINISHED\", not running, finished, stopped, "
                          "failed or pruned",
                          "summary.json: \"steps\" is -250, not a whole number >= 0",
                          "summary.json: final \"val/accuracy\" is \"high\", not a number"));
}

TEST_F(RunsTree, FiltersByFieldTagAndConfigValue) {
  auto keep = [&](std::vector<std::string> texts) {
    std::vector<RunFilter> filters;
    for (const auto& text : texts) filters.push_back(RunFilter::parse(text));
    return ids(filtered(all(), filters));
  };
  EXPECT_THAT(keep({"status=finished"}), ElementsAre("20261101-100000"));
  EXPECT_THAT(keep({"val/accuracy>0.8"}), ElementsAre("20261101-100000"));
  EXPECT_THAT(keep({"val/accuracy<=0.7"}), ElementsAre("20261102-100000"));
  EXPECT_THAT(keep({"name=fash*"}), ElementsAre("20261101-100000", "20261102-100000"));
  EXPECT_THAT(keep({"optimizer.lr=0.01"}), ElementsAre("20261102-100000"));
  EXPECT_THAT(keep({"status!=finished"}), ElementsAre("20261102-100000", "20261103-100000"));
  EXPECT_THAT(keep({"name=fashion", "steps>=50"}), ElementsAre("20261101-100000"));
}

TEST_F(RunsTree, ABadFilterNamesTheFormsOrTheKnownKeys) {
  try {
    RunFilter::parse("accuracy");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected KEY=GLOB"));
  }
  EXPECT_THROW(RunFilter::parse("steps>many"), UsageError);
  try {
    filtered(all(), {RunFilter::parse("val/acuracy>0.5")});
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no run has \"val/acuracy\""));
    EXPECT_THAT(e.what(), HasSubstr("val/accuracy"));
  }
}

TEST_F(RunsTree, SortsAscendingOrDescendingWithRunsLackingTheKeyLast) {
  std::vector<RunInfo> runs = all();
  sort_runs(runs, "-val/accuracy");
  EXPECT_THAT(ids(runs), ElementsAre("20261101-100000", "20261102-100000", "20261103-100000"));
  sort_runs(runs, "optimizer.lr");
  EXPECT_THAT(ids(runs), ElementsAre("20261102-100000", "20261101-100000", "20261103-100000"));
  EXPECT_THROW(sort_runs(runs, "speed"), UsageError);
}

TEST_F(RunsTree, TheTableShowsEvaluationMetricsAndTheConfigValuesThatDiffer) {
  std::vector<RunInfo> runs = all();
  std::vector<std::string> columns = table_columns(runs);
  EXPECT_THAT(columns, ::testing::Contains("val/accuracy"));
  EXPECT_THAT(columns, ::testing::Contains("optimizer.lr"));
  EXPECT_THAT(columns, ::testing::Not(::testing::Contains("data.batch_size"))) << "the same";
  EXPECT_THAT(columns, ::testing::Not(::testing::Contains("val/confusion_matrix/true_0/pred_0")));
  EXPECT_THAT(columns, ::testing::Not(::testing::Contains("train/loss")));
  std::string table = runs_table(runs);
  EXPECT_THAT(table, HasSubstr("1:02:03"));
  EXPECT_THAT(table, HasSubstr("val/accuracy 0.92"));
}

TEST_F(RunsTree, CsvAndJsonCarryTheSameRuns) {
  std::vector<RunInfo> runs = all();
  std::string csv = runs_csv(runs);
  EXPECT_THAT(csv, HasSubstr("name,id,status,start,duration,steps,best,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  Json json = Json::parse(runs_json(runs));
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[0]["final"]["val/confusion_matrix/true_0/pred_0"], 12);
  EXPECT_EQ(json[0]["config"]["optimizer.lr"], 0.1);
  EXPECT_EQ(json[2]["problems"].size(), 3u);
}

TEST_F(RunsTree, CompareShowsTheConfigDifferencesAndTheMetricsSideBySide) {
  std::string table = compare_table({read_run(finished_), read_run(running_)});
  EXPECT_THAT(table, HasSubstr("config optimizer.lr"));
  EXPECT_THAT(table, ::testing::ContainsRegex("config optimizer.lr +0.1 +0.01"));
  EXPECT_THAT(table, ::testing::ContainsRegex("val/accuracy +0.91 +0.7"));
  EXPECT_THAT(compare_table({read_run(finished_), read_run(finished_)}),
              HasSubstr("(the configs are the same)"));
}

TEST_F(RunsTree, NotesAreAppendedAsParagraphs) {
  append_note(finished_, "lr too high");
  append_note(finished_, "try 0.05");
  EXPECT_EQ(read_run(finished_).notes, "lr too high\n\ntry 0.05\n");
  EXPECT_THROW(append_note(dir_.file("runs/empty_folder"), "x"), UsageError);
  // Six notes.md of 250 MB each took the board's table to 4.6 GB: past a MiB, a problem.
  std::filesystem::resize_file(finished_ + "/notes.md", kMaxNotesBytes + 1);  // sparse
  RunInfo big = read_run(finished_);
  EXPECT_EQ(big.notes, "");
  EXPECT_THAT(::testing::PrintToString(big.problems),
              HasSubstr("more than the 1048576 kiln reads"));
}

// A long run's metrics.csv is read from its end only (the last 64 KiB), so listing stays fast:
// rows far from the end are not even parsed.
TEST_F(RunsTree, OnlyTheEndOfALongMetricsFileIsRead) {
  {
    std::ofstream out(running_ + "/metrics.csv", std::ios::binary);
    out << kHeader;
    for (int row = 0; row < 20000; ++row) out << "not,a,row,of,numbers,here\n";
    for (int step = 1; step <= 5000; ++step) out << step << ",0,train,loss," << step << ",0\n";
  }
  RunInfo run = read_run(running_);
  EXPECT_TRUE(run.problems.empty()) << run.problems.front();
  EXPECT_EQ(run.steps, 5000);
  EXPECT_EQ(run.final.at("train/loss"), 5000);
}

TEST(IsoTime, ReadsWhatKilnWrites) {
  EXPECT_EQ(parse_iso_time("1970-01-01T00:01:00Z"), 60.0);
  EXPECT_FALSE(parse_iso_time("yesterday").has_value());
  EXPECT_FALSE(parse_iso_time("").has_value());
}

}  // namespace
}  // namespace kiln::run
