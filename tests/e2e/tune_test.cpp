// End-to-end: `kiln tune` runs a study's trials as ordinary runs (in parallel, with their sampled
// values in their configs), records each in the study database with the value its run logged,
// keeps going past a failed trial, goes on with a study on --resume, and refuses a bad search
// space before any trial starts.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "kiln/core/config.h"
#include "kiln/core/folder_lock.h"
#include "kiln/core/text_file.h"
#include "kiln/tune/study.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace tune_e2e_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

class Tune : public ::testing::Test {
 protected:
  std::string config(const std::string& tune) {
    std::string rows = dir_.write("rows.csv", testing::binary_rows(200));
    return dir_.write("binary.yaml",
                      testing::binary_config(rows, rows,
                                             "train: {max: 10 steps, validate_every: 10 steps}\n"
                                             "tune:\n" +
                                                 tune));
  }
  testing::CommandResult tune(const std::string& config, const std::string& more) {
    return testing::run_command(
        kiln("tune " + config + " --runs-root " + dir_.file("runs") + " " + more));
  }
  std::string study_dir(const std::string& name) { return dir_.file("runs/binary/" + name); }
  std::vector<tune::TrialRecord> trials_of(const std::string& name) {
    return tune::Study::open(study_dir(name) + "/study.db").trials();
  }

  testing::TempDir dir_;
};

TEST_F(Tune, TrialsAreOrdinaryRunsWithTheirValuesAndTheMetricTheyLogged) {
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 3, parallel: 2, sampler: random,\n"
      "   space: {optimizer.lr: {type: loguniform, low: 0.01, high: 1.0},\n"
      "           'model.hidden[0]': {type: int, low: 2, high: 16}}}\n");
  auto ran = tune(file, "--study s1");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, AllOf(HasSubstr("study: " + study_dir("s1")), HasSubstr("best: trial")));
  std::vector<tune::TrialRecord> trials = trials_of("s1");
  ASSERT_EQ(trials.size(), 3u);
  for (const tune::TrialRecord& t : trials) {
    SCOPED_TRACE(t.number);
    EXPECT_EQ(t.state, tune::TrialState::kComplete);
    std::string run = study_dir("s1") + "/" + t.run_dir;
    Json config = load_config_file(run + "/config.yaml");
    EXPECT_EQ(config["optimizer"]["lr"], t.values["optimizer.lr"]);
    EXPECT_EQ(config["model"]["hidden"][0], t.values["model.hidden[0]"]);
    EXPECT_EQ(config["runtime"]["threads"].dump(), "1") << "the cores divided between 2 trials";
    EXPECT_TRUE(config["tune"].is_null()) << "a trial is no study";
    Json summary = Json::parse(read_text_file(run + "/summary.json"));
    EXPECT_EQ(t.value, summary["final"]["val/accuracy"].get<double>());
    std::string log = read_text_file(study_dir("s1") + "/logs/" + t.run_dir + ".log");
    EXPECT_THAT(log, HasSubstr("run: " + run)) << "the trial's standard output";
  }
  EXPECT_NE(trials[0].values, trials[1].values);
  // The best config, with the thread the trial had, repeats the best trial exactly.
  auto shown = testing::run_command(kiln("tune show " + study_dir("s1")));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("with runtime.threads: 1, as the trial ran"));
  auto best = std::min_element(trials.begin(), trials.end(), [](const auto& a, const auto& b) {
    return a.value > b.value;  // the highest accuracy first
  });
  auto trained = testing::run_command(
      kiln("train " + study_dir("s1") + "/best.yaml --run-dir " + dir_.file("again")));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  Json repeated = Json::parse(read_text_file(dir_.file("again") + "/summary.json"));
  EXPECT_EQ(repeated["final"]["val/accuracy"].get<double>(), *best->value);
  Json original =
      Json::parse(read_text_file(study_dir("s1") + "/" + best->run_dir + "/summary.json"));
  EXPECT_EQ(repeated["final"]["val/loss"], original["final"]["val/loss"]);
  // --resume goes on with the study up to its new budget; the trials it had stay as they were.
  auto more = tune(file, "--study s1 --resume --set tune.trials=4");
  ASSERT_EQ(more.exit_code, 0) << more.out << more.err;
  std::vector<tune::TrialRecord> after = trials_of("s1");
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[3].state, tune::TrialState::kComplete);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(after[i].value, trials[i].value);
  auto changed = tune(file, "--study s1 --resume --set optimizer.lr=0.5");
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_THAT(changed.err, HasSubstr("only tune.trials, tune.time and tune.parallel"));
  auto again = tune(file, "--study s1");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, AllOf(HasSubstr("exists already"), HasSubstr("--resume")));
}

TEST_F(Tune, AFailedTrialIsRecordedAndTheStudyGoesOn) {
  std::string missing = dir_.file("missing.csv");
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 5, sampler: grid,\n"
      "   space: {data.val.file: {type: choice, values: [" +
      dir_.file("rows.csv") + ", " + missing + "]}}}\n");
  auto ran = tune(file, "--study grid");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("the sampler has no more trials to give after 2"));
  std::vector<tune::TrialRecord> trials = trials_of("grid");
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].state, tune::TrialState::kComplete);
  EXPECT_EQ(trials[1].state, tune::TrialState::kFailed);
  EXPECT_THAT(trials[1].error, AllOf(HasSubstr("exited with status"), HasSubstr(missing)));
  EXPECT_THAT(ran.out, HasSubstr("trial 1 failed"));
}

TEST_F(Tune, AshaPrunesTrialsBehindAtARungWithACheckpointAndTheirLastValue) {
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 4, sampler: grid,\n"
      "   pruner: {type: asha, min_resource: 1, reduction: 2},\n"
      "   space: {optimizer.lr: {type: choice, values: [1.0, 0.5, 0.0001, 0.0002]}}}\n");
  std::string four_epochs = "--set 'train={max: 4 epochs, validate_every: 1 epoch}'";
  auto ran = tune(file, "--study asha " + four_epochs);
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  std::vector<tune::TrialRecord> trials = trials_of("asha");
  ASSERT_EQ(trials.size(), 4u);
  // The first trial has none to compare with (rungs at epochs 1, 2 and 4); the last two (lr 1e-4
  // and 2e-4) learn nothing in their first epoch, when the first had learned much.
  EXPECT_EQ(trials[0].state, tune::TrialState::kComplete);
  EXPECT_EQ(trials[0].reported.size(), 4u);
  for (size_t i = 2; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(trials[i].state, tune::TrialState::kPruned);
    ASSERT_EQ(trials[i].reported.size(), 1u);
    EXPECT_EQ(trials[i].value, trials[i].reported[0].value);
    EXPECT_THAT(trials[i].error, HasSubstr("that reached 1 epoch did better"));
    std::string run = study_dir("asha") + "/" + trials[i].run_dir;
    Json record = Json::parse(read_text_file(run + "/run.json"));
    EXPECT_EQ(record["status"], "pruned");
    EXPECT_EQ(record["stop_reason"], trials[i].error);
    EXPECT_TRUE(fs::exists(run + "/checkpoints/step-000000010"));
  }
  EXPECT_THAT(ran.out, HasSubstr("trial 2 pruned (asha: 2 of the 3 trials that reached 1 epoch"));
  // tune show: the table, the best trial and its config, ready to train.
  auto shown = testing::run_command(kiln("tune show " + study_dir("asha")));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, AllOf(HasSubstr("4 trials: 1 complete, 3 pruned"),
                               HasSubstr("2      pruned    0.605"), HasSubstr("best: trial 0")));
  Json best = load_config_file(study_dir("asha") + "/best.yaml");
  EXPECT_EQ(best["optimizer"]["lr"], 1.0);
  auto checked = testing::run_command(kiln("train " + study_dir("asha") + "/best.yaml --dry-run"));
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
}

TEST_F(Tune, ATrialOfTwoProcessesRunsThroughTheLauncherAndIsPrunedOnBoth) {
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 2, nproc: 2, sampler: grid,\n"
      "   pruner: {type: asha, min_resource: 1, reduction: 2},\n"
      "   space: {optimizer.lr: {type: choice, values: [1.0, 0.0001]}}}\n");
  auto ran = tune(file, "--study ddp --set 'train={max: 4 epochs, validate_every: 1 epoch}'");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  std::vector<tune::TrialRecord> trials = trials_of("ddp");
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].state, tune::TrialState::kComplete);
  EXPECT_EQ(trials[0].reported.size(), 4u);
  // lr 1e-4 learns nothing in an epoch: rank 0's reporter prunes it, and the ranks stop together.
  EXPECT_EQ(trials[1].state, tune::TrialState::kPruned);
  EXPECT_EQ(trials[1].reported.size(), 1u);
  for (const tune::TrialRecord& t : trials) {
    SCOPED_TRACE(t.number);
    std::string run = study_dir("ddp") + "/" + t.run_dir;
    Json record = Json::parse(read_text_file(run + "/run.json"));
    EXPECT_EQ(record["world_size"], 2);
    EXPECT_EQ(record["status"], t.number == 0 ? "finished" : "pruned");
    std::string log = read_text_file(study_dir("ddp") + "/logs/" + t.run_dir + ".log");
    EXPECT_THAT(log, AllOf(HasSubstr("[rank 0] "), HasSubstr("[rank 1] ")));
  }
}

TEST_F(Tune, ASignalStopsTheStudyAndResumeFinishesItWithoutRedoingATrial) {
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 3, sampler: random,\n"
      "   space: {optimizer.lr: {type: loguniform, low: 0.01, high: 1}}}\n");
  std::string long_trials = " --set 'train={max: 3000 steps, validate_every: 1000 steps}'";
  testing::ChildProcess study(kiln("tune " + file + " --runs-root " + dir_.file("runs") +
                                   " --study stopped" + long_trials));
  std::string line;
  while (study.read_line(line) && line.find("trial 1 started") == std::string::npos) {
  }
  // One process runs a study at a time.
  auto second = tune(file, "--study stopped --resume");
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_THAT(second.err, HasSubstr("is being run by another kiln process (pid"));
  study.signal(SIGTERM);
  EXPECT_EQ(study.wait(), 128 + SIGTERM);
  std::vector<tune::TrialRecord> before = trials_of("stopped");
  ASSERT_EQ(before.size(), 2u) << "no trial starts after the signal";
  EXPECT_EQ(before[0].state, tune::TrialState::kComplete);
  EXPECT_NE(before[1].state, tune::TrialState::kFailed);
  auto resumed = tune(file, "--study stopped --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  std::vector<tune::TrialRecord> after = trials_of("stopped");
  ASSERT_EQ(after.size(), 3u);
  for (const tune::TrialRecord& t : after) EXPECT_EQ(t.state, tune::TrialState::kComplete);
  EXPECT_EQ(after[0].value, before[0].value);
  EXPECT_EQ(after[0].finished, before[0].finished) << "a finished trial is not run again";
  EXPECT_EQ(after[1].values, before[1].values);
  if (before[1].state == tune::TrialState::kRunning) {
    EXPECT_THAT(resumed.out, ::testing::AnyOf(HasSubstr("trial 1 resumes from its last checkpoint"),
                                              HasSubstr("trial 1 starts again")));
  }
}

TEST_F(Tune, AStudyKilledWithSigkillResumesWithNoTrialLostOrRepeated) {
  std::string file = config(
      "  {metric: val/accuracy, mode: max, trials: 3, sampler: random,\n"
      "   space: {optimizer.lr: {type: loguniform, low: 0.01, high: 1}}}\n");
  std::string long_trials = " --set 'train={max: 3000 steps, validate_every: 1000 steps}'";
  testing::ChildProcess study(
      kiln("tune " + file + " --runs-root " + dir_.file("runs") + " --study killed" + long_trials));
  std::string line;
  while (study.read_line(line) && line.find("trial 1 started") == std::string::npos) {
  }
  // Once trial 1 trains (it holds its run folder), so that it would train on alone.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!FolderLock::holder(study_dir("killed") + "/trial-0001") &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  study.signal(SIGKILL);
  EXPECT_EQ(study.wait(), 128 + SIGKILL);
  std::vector<tune::TrialRecord> before = trials_of("killed");
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[1].state, tune::TrialState::kRunning) << "no one was left to record its end";
  // At once: trial 1's process stops as its study died (a checkpoint first, given the time),
  // and the study waits for it rather than running it twice.
  auto resumed = tune(file, "--study killed --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, ::testing::AnyOf(HasSubstr("trial 1 resumes from its last checkpoint"),
                                            HasSubstr("trial 1 starts again")))
      << "trial 1 had trained on alone to its end";
  std::vector<tune::TrialRecord> after = trials_of("killed");
  ASSERT_EQ(after.size(), 3u);
  for (const tune::TrialRecord& t : after) EXPECT_EQ(t.state, tune::TrialState::kComplete);
  EXPECT_EQ(after[0].finished, before[0].finished) << "a finished trial is not run again";
  EXPECT_EQ(after[1].values, before[1].values);
  Json trial1 = Json::parse(read_text_file(study_dir("killed") + "/trial-0001/run.json"));
  EXPECT_EQ(trial1["status"], "finished");
}

TEST_F(Tune, ABadSearchSpaceIsAConfigErrorBeforeAnyTrial) {
  struct Case {
    std::string space, expected;
  };
  std::vector<Case> cases = {
      {"{optimizer.lr: {type: uniform, low: 0.5, high: 0.1}}",
       "config error at tune.space.optimizer.lr.high"},
      {"{optimizer.lr: {type: loguniform, low: 0, high: 0.1}}", "must be above 0 for loguniform"},
      {"{optimizer.lrr: {type: uniform, low: 0.1, high: 0.5}}",
       "config error at tune.space.optimizer.lrr"},
      {"{optimizer: {type: choice, values: [sgd, {type: adamm}]}}", "unknown optimizer \"adamm\""},
      {"{'model.hidden[3]': {type: int, low: 1, high: 4}}", "index 3 is out of range"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.space);
    std::string file = config("  {trials: 2, space: " + c.space + "}\n");
    auto ran = tune(file, "--study bad");
    EXPECT_EQ(ran.exit_code, 2) << ran.out << ran.err;
    EXPECT_THAT(ran.err, HasSubstr(c.expected));
    EXPECT_FALSE(fs::exists(study_dir("bad")));
  }
  auto none = tune(config("  {space: {}}\n"), "");
  EXPECT_THAT(none.err, HasSubstr("no parameters"));
}

TEST_F(Tune, ASpaceFileStandsInForTheConfigsSpace) {
  std::string rows = dir_.write("rows.csv", testing::binary_rows(200));
  // A config with no tune: section; the file brings the space, the defaults the rest.
  std::string plain = dir_.write(
      "plain.yaml",
      testing::binary_config(rows, rows, "train: {max: 10 steps, validate_every: 10 steps}\n"));
  std::string space =
      dir_.write("space.yaml", "optimizer.lr: {type: choice, values: [0.5, 0.25]}\n");
  auto ran = tune(plain, "--space " + space + " --study file --set tune.trials=2 " +
                             "--set tune.sampler=grid --set tune.metric=val/accuracy");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  tune::Study study = tune::Study::open(study_dir("file") + "/study.db");
  EXPECT_EQ(study.info().config["tune"]["space"], load_config_file(space)) << "kept for --resume";
  std::vector<tune::TrialRecord> trials = study.trials();
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].values["optimizer.lr"], 0.5);
  EXPECT_EQ(trials[1].values["optimizer.lr"], 0.25);
  // It replaces a config's own space.
  std::string own =
      config("  {trials: 1, space: {optimizer.lrr: {type: uniform, low: 0, high: 1}}}\n");
  auto replaced = tune(own, "--space " + space + " --study replaced");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.out << replaced.err;
  // Bad files: named, before any trial.
  std::string list = dir_.write("list.yaml", "[optimizer.lr]\n");
  std::string wrong = dir_.write("wrong.yaml", "optimizer.lr: {type: uniform, low: 2, high: 1}\n");
  std::string empty = dir_.write("empty.yaml", "{}\n");
  struct Case {
    std::string args, expected;
    int exit_code;
  };
  std::vector<Case> cases = {
      {"--space " + list, list + "): the top level of a config must be a mapping", 2},
      {"--space " + empty, "the --space file must map config paths to distributions", 2},
      {"--space " + dir_.file("missing.yaml"), "cannot open " + dir_.file("missing.yaml"), 1},
      {"--space " + wrong, "tune.space.optimizer.lr", 2},
      {"--space " + space + " --study file --resume", "--space starts a new study", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    auto bad = tune(plain, c.args);
    EXPECT_EQ(bad.exit_code, c.exit_code) << bad.out << bad.err;
    EXPECT_THAT(bad.err, HasSubstr(c.expected));
  }
}

}  // namespace tune_e2e_test
}  // namespace kiln
