// End-to-end: `kiln tune` over a program of the user's (tune.command): the Python example
// (examples/tune_program/train.py) tuned with its values on its command line and its reports
// read from its output, trials behind the median pruned with SIGTERM; reports through the
// metrics file alone; a malformed report, a silent program and a failing one each failing their
// trial while the study goes on; and a study killed with SIGKILL resumed, its trial's program
// started again from its own checkpoint.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "kiln/core/text_file.h"
#include "kiln/tune/study.h"
#include "tests/support/process_state.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace tune_program_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

class TuneProgram : public ::testing::Test {
 protected:
  // A study of train.py: `epochs` each, `pause` seconds more per epoch, and `more` tune keys.
  std::string study_of_train_py(int epochs, double pause, const std::string& more) {
    return dir_.write("study.yaml",
                      "version: 1\nname: program\nseed: 4\ntune:\n"
                      "  command: [python3, " +
                          std::string(KILN_SOURCE_DIR) +
                          "/examples/tune_program/train.py, --lr, '{lr}', '--momentum={momentum}', "
                          "--epochs, '" +
                          std::to_string(epochs) + "', --pause, '" + std::to_string(pause) +
                          "']\n"
                          "  metric: val_loss\n  mode: min\n  sampler: random\n" +
                          more +
                          "  space:\n"
                          "    lr: {type: loguniform, low: 1.0e-5, high: 0.05}\n"
                          "    momentum: {type: uniform, low: 0.0, high: 0.9}\n");
  }
  // A study of `command` (YAML) minimizing loss over x in [0, 1], with `more` tune keys.
  std::string study_of(const std::string& name, const std::string& command,
                       const std::string& more = "") {
    return dir_.write(name, "name: program\ntune:\n  command: " + command +
                                "\n  metric: loss\n  mode: min\n" + more +
                                "  space: {x: {type: uniform, low: 0, high: 1}}\n");
  }
  testing::CommandResult tune(const std::string& config, const std::string& more) {
    return testing::run_command(
        kiln("tune " + config + " --runs-root " + dir_.file("runs") + " " + more));
  }
  static std::string read_text_file_or(const std::string& path) {
    return std::filesystem::exists(path) ? read_text_file(path) : "";
  }
  std::string study_dir(const std::string& name) { return dir_.file("runs/program/" + name); }
  std::vector<tune::TrialRecord> trials_of(const std::string& name) {
    return tune::Study::open(study_dir(name) + "/study.db").trials();
  }
  std::string log_of(const std::string& study, int64_t number) {
    return read_text_file(study_dir(study) + "/logs/" + tune::trial_folder(number) + ".log");
  }

  testing::TempDir dir_;
};

TEST_F(TuneProgram, APythonScriptIsTunedItsReportsRecordedAndTrialsBehindPruned) {
  std::string file =
      study_of_train_py(6, 0, "  trials: 8\n  pruner: {type: median, startup: 2, warmup: 1}\n");
  auto ran = tune(file, "--study s");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("best: trial"));
  std::vector<tune::TrialRecord> trials = trials_of("s");
  ASSERT_EQ(trials.size(), 8u);
  int complete = 0, pruned = 0;
  for (const tune::TrialRecord& t : trials) {
    std::string log = log_of("s", t.number);
    // Its values on its command line, as train.py printed them back through its reports.
    EXPECT_THAT(log, HasSubstr("kiln-metric val_loss=")) << t.number;
    EXPECT_TRUE(fs::exists(study_dir("s") + "/" + t.run_dir + "/metrics.jsonl")) << t.number;
    if (t.state == tune::TrialState::kComplete) {
      ++complete;
      ASSERT_EQ(t.reported.size(), 6u) << t.number;  // one per epoch, steps 0 to 5
      EXPECT_EQ(t.reported.back().step, 5);
      // The final value is the last line without a step, as train.py printed it.
      size_t last = log.rfind("kiln-metric val_loss=");
      EXPECT_NEAR(*t.value, std::stod(log.substr(last + 21)), 1e-9 * (1 + *t.value));
    } else {
      ASSERT_EQ(t.state, tune::TrialState::kPruned) << t.number << " " << t.error;
      ++pruned;
      EXPECT_LT(t.reported.size(), 6u) << "stopped before its end";
      EXPECT_EQ(t.value, t.reported.back().value);
    }
  }
  EXPECT_GE(complete, 2);
  EXPECT_GE(pruned, 1) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("stopping it (SIGTERM)"));
  // `tune show` gives the best trial's command line, to run it again.
  auto shown = testing::run_command(kiln("tune show " + study_dir("s")));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("best command: python3 "));
  EXPECT_THAT(shown.out, HasSubstr("/examples/tune_program/train.py --lr "));
}

TEST_F(TuneProgram, AProgramMayReportThroughTheMetricsFileAlone) {
  std::string file =
      study_of("study.yaml",
               "[python3, -c, \"import json, os; f = open(os.environ['KILN_METRICS_FILE'], 'a'); "
               "print(json.dumps(dict(loss={x}, step=0)), file=f); "
               "print(json.dumps(dict(loss={x})), file=f)\"]",
               "  trials: 3\n  sampler: random\n");
  auto ran = tune(file, "--study f");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  for (const tune::TrialRecord& t : trials_of("f")) {
    ASSERT_EQ(t.state, tune::TrialState::kComplete) << t.error;
    EXPECT_NEAR(*t.value, t.values["x"].get<double>(), 1e-6);
    ASSERT_EQ(t.reported.size(), 1u);
  }
}

TEST_F(TuneProgram, AMalformedReportASilentProgramAndAFailingOneEachFailTheirTrial) {
  std::string file = dir_.write(
      "study.yaml",
      "name: program\ntune:\n"
      "  command: [sh, -c, '{script}']\n"
      "  metric: loss\n  mode: min\n  trials: 4\n  sampler: grid\n"
      "  space:\n"
      "    script: {type: choice, values: ['echo \"kiln-metric loss=oops step=1\"; sleep 600',\n"
      "             'exit 0', 'echo \"kiln-metric loss=0.5\"', 'echo boom; exit 3']}\n");
  auto ran = tune(file, "--study m");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  std::vector<tune::TrialRecord> trials = trials_of("m");
  ASSERT_EQ(trials.size(), 4u);
  std::map<std::string, tune::TrialRecord> by_script;
  for (const tune::TrialRecord& t : trials) by_script[t.values["script"].get<std::string>()] = t;
  const tune::TrialRecord& malformed =
      by_script.at("echo \"kiln-metric loss=oops step=1\"; sleep 600");
  EXPECT_EQ(malformed.state, tune::TrialState::kFailed);
  // Named by its log and line; and stopped, not left to sleep its ten minutes.
  EXPECT_THAT(malformed.error, HasSubstr("trial-"));
  EXPECT_THAT(malformed.error, HasSubstr(".log line 1: loss=oops is no finite number"));
  EXPECT_EQ(by_script.at("exit 0").state, tune::TrialState::kFailed);
  EXPECT_THAT(by_script.at("exit 0").error,
              HasSubstr("the program reported no loss (print kiln-metric loss=VALUE"));
  EXPECT_EQ(by_script.at("echo boom; exit 3").error, "exited with status 3: boom");
  EXPECT_EQ(by_script.at("echo \"kiln-metric loss=0.5\"").value, 0.5);
}

bool ended(pid_t pid) { return testing::process_ended(pid); }

// A failing program that ignores SIGTERM kept the study waiting forever; what a trial left in its
// group outlived the study. Both are killed once tune.kill_after has passed, before the study
// ends.
TEST_F(TuneProgram, ATrialThatIgnoresSigtermAndWhatItLeavesAreKilledAfterKillAfter) {
  std::string stubborn = dir_.file("stubborn.pid"), left = dir_.file("left.pid");
  std::string ready = dir_.file("left.ready");  // its trap is set
  std::string file = dir_.write(
      "study.yaml",
      "name: program\ntune:\n"
      "  command: [sh, -c, '{script}']\n"
      "  metric: loss\n  mode: min\n  trials: 2\n  sampler: grid\n  kill_after: 1 s\n"
      "  space:\n"
      "    script: {type: choice, values: [\n"
      "      'trap \"\" TERM; echo $$ > " +
          stubborn +
          "; echo \"kiln-metric loss=oops step=1\"; while :; do sleep 1; done',\n"
          "      '(trap \"\" TERM; touch " +
          ready + "; exec sleep 600) > /dev/null & echo $! > " + left + "; while [ ! -e " + ready +
          " ]; do :; done; echo \"kiln-metric loss=0.5\"']}\n");
  auto start = std::chrono::steady_clock::now();
  auto ran = tune(file, "--study t");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_THAT(ran.out, HasSubstr("did not end within tune.kill_after (1 s) of being told to "
                                 "stop; killing it and all it started (SIGKILL)"));
  EXPECT_THAT(ran.out, HasSubstr("left processes that did not end within tune.kill_after"));
  std::vector<tune::TrialRecord> trials = trials_of("t");
  ASSERT_EQ(trials.size(), 2u);
  for (const tune::TrialRecord& t : trials) {
    if (t.values["script"].get<std::string>().rfind("trap", 0) == 0)
      EXPECT_EQ(t.state, tune::TrialState::kFailed);
    else
      EXPECT_EQ(t.value, 0.5);
  }
  EXPECT_TRUE(ended(std::stoi(read_text_file(stubborn))));
  EXPECT_TRUE(ended(std::stoi(read_text_file(left)))) << "nothing of a trial outlives the study";
}

// A trial that left 4,000 processes ignoring SIGTERM held its study a minute past kill_after:
// the keeper looked at /proc once per process it reaped. Now it reaps all that have ended
// between looks: about 5 s on 2 cores, most of it the program starting them.
TEST_F(TuneProgram, ThousandsOfProcessesATrialLeavesAreKilledInSeconds) {
  std::string file =
      dir_.write("study.yaml",
                 "name: program\ntune:\n"
                 "  command: [sh, -c, 'for i in $(seq 4000); do (trap \"\" TERM; exec sleep 600) > "
                 "/dev/null & done; echo \"kiln-metric loss=0.5\"']\n"
                 "  metric: loss\n  mode: min\n  trials: 1\n  kill_after: 1 s\n"
                 "  space: {x: {type: uniform, low: 0, high: 1}}\n");
  auto start = std::chrono::steady_clock::now();
  auto ran = tune(file, "--study many");
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_THAT(ran.out, HasSubstr("left processes that did not end within tune.kill_after"));
  EXPECT_EQ(trials_of("many").at(0).value, 0.5);
}

// After kill -9 of the study, a process the program had started in a session of its own lived on
// (only the program was told, by PR_SET_PDEATHSIG). The trial's keeper now tells both, and kills
// both once tune.kill_after has passed: they ignore SIGTERM.
TEST_F(TuneProgram, NothingOfATrialOutlivesAStudyKilledWithSigkill) {
  std::string left = dir_.file("left.pid"), program = dir_.file("program.pid");
  std::string script = dir_.write("leave.sh", "setsid sh -c 'trap \"\" TERM; echo $$ > " + left +
                                                  "; exec sleep 600' > /dev/null &\n"
                                                  "while [ ! -s " +
                                                  left +
                                                  " ]; do :; done\n"
                                                  "trap '' TERM\necho $$ > " +
                                                  program + "\nwhile :; do sleep 0.1; done\n");
  std::string file =
      study_of("study.yaml", "[sh, " + script + ", '{x}']", "  trials: 1\n  kill_after: 1 s\n");
  testing::ChildProcess study(
      kiln("tune " + file + " --runs-root " + dir_.file("runs") + " --study orphans"));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline && read_text_file_or(program).empty())
    std::this_thread::yield();
  ASSERT_FALSE(read_text_file_or(program).empty()) << "the program did not start";
  study.signal(SIGKILL);
  auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(study.wait(), 128 + SIGKILL);
  pid_t escaped = std::stoi(read_text_file(left)), stubborn = std::stoi(read_text_file(program));
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && !(ended(escaped) && ended(stubborn)))
    std::this_thread::yield();
  EXPECT_TRUE(ended(escaped)) << "a process in a session of its own outlived the study";
  EXPECT_GE(std::chrono::steady_clock::now() - killed, std::chrono::seconds(1))
      << "both ignore SIGTERM: they are killed at tune.kill_after";
  EXPECT_TRUE(ended(stubborn));
}

// A program that killed its keeper (its parent) left its children to init, running after the
// study: the study, a subreaper, inherits and kills them at once, and the trial fails.
TEST_F(TuneProgram, NothingOfATrialOutlivesAProgramThatKillsItsKeeper) {
  std::string left = dir_.file("left.pid"), program = dir_.file("program.pid");
  std::string script =
      dir_.write("parricide.sh", "setsid sh -c 'trap \"\" TERM; echo $$ > " + left +
                                     "; exec sleep 600' > /dev/null &\n" + "while [ ! -s " + left +
                                     " ]; do :; done\n" + "trap '' TERM\necho $$ > " + program +
                                     "\nkill -9 $PPID\nwhile :; do sleep 0.1; done\n");
  std::string file =
      study_of("study.yaml", "[sh, " + script + ", '{x}']", "  trials: 1\n  kill_after: 600 s\n");
  auto ran = tune(file, "--study parricide");
  EXPECT_THAT(ran.out + ran.err, HasSubstr("trial 0: its keeper was killed by signal 9"));
  EXPECT_THAT(ran.out + ran.err, HasSubstr("process(es) it kept are killed"));
  pid_t escaped = std::stoi(read_text_file(left)), stubborn = std::stoi(read_text_file(program));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && !(ended(escaped) && ended(stubborn)))
    std::this_thread::yield();
  EXPECT_TRUE(ended(escaped)) << "a process in a session of its own outlived the study";
  EXPECT_TRUE(ended(stubborn)) << "the program itself, which ignores SIGTERM";
}

// A program that stopped its keeper (SIGSTOP) left a zombie the keeper never reaped, and the
// study waited forever: the study continues its keepers at each look.
TEST_F(TuneProgram, AProgramThatStopsItsKeeperEndsItsTrialAllTheSame) {
  std::string file =
      study_of("study.yaml", "[sh, -c, 'kill -STOP $PPID; echo kiln-metric loss=$0', '{x}']",
               "  trials: 1\n");
  auto ran = testing::run_command("timeout 120 " + kiln("tune " + file + " --runs-root " +
                                                        dir_.file("runs") + " --study stop"));
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::vector<tune::TrialRecord> trials = trials_of("stop");
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state, tune::TrialState::kComplete);
}

// A parameter named `trial` never reached the program ({trial} is the trial's number): refused.
TEST_F(TuneProgram, AParameterNamedLikeAPlaceholderIsAConfigError) {
  std::string file = dir_.write("study.yaml",
                                "name: program\ntune:\n  command: [sh, -c, 'echo {trial}']\n"
                                "  metric: loss\n  mode: min\n"
                                "  space: {trial: {type: int, low: 1, high: 3}}\n");
  auto refused = tune(file, "");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("tune.space.trial"));
  EXPECT_THAT(refused.err, HasSubstr("name the parameter otherwise"));
}

// A program's parameters are its placeholders' names, not config paths: `a.b[0]` was refused as
// no path of the study's config. It reaches the program.
TEST_F(TuneProgram, AParameterNameNeedNotBeAConfigPath) {
  std::string file = dir_.write(
      "study.yaml",
      "name: program\ntune:\n  command: [sh, -c, 'echo kiln-metric loss=$0', '{a.b[0]}']\n"
      "  metric: loss\n  mode: min\n  trials: 1\n"
      "  space: {'a.b[0]': {type: int, low: 2, high: 3}}\n");
  auto ran = tune(file, "--study paths");
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::vector<tune::TrialRecord> trials = trials_of("paths");
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state, tune::TrialState::kComplete);
  ASSERT_TRUE(trials[0].value);
  EXPECT_EQ(*trials[0].value, trials[0].values.at("a.b[0]").get<double>());
}

TEST_F(TuneProgram, AProgramNotFoundStopsTheStudyNamingIt) {
  std::string file = study_of("study.yaml", "[no-such-program-of-kiln, '{x}']", "  trials: 2\n");
  auto ran = tune(file, "--study n");
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_THAT(ran.err, HasSubstr("cannot start no-such-program-of-kiln (tune.command): No such "
                                 "file or directory"));
  std::string bad = study_of("bad.yaml", "[python3, '--x={learning_rate}']");
  auto refused = tune(bad, "");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("tune.command[1]"));
  EXPECT_THAT(refused.err, HasSubstr("{learning_rate} names no parameter"));
}

TEST_F(TuneProgram, AStudyKilledWithSigkillResumesItsProgramFromItsOwnCheckpoint) {
  std::string file = study_of_train_py(12, 0.1, "  trials: 2\n");
  testing::ChildProcess study(
      kiln("tune " + file + " --runs-root " + dir_.file("runs") + " --study k"));
  std::string line;
  while (study.read_line(line) && line.find("trial 0 started") == std::string::npos) {
  }
  // Once trial 0 has reported (and so checkpointed) an epoch.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline &&
         (!fs::exists(study_dir("k") + "/study.db") || trials_of("k").empty() ||
          trials_of("k")[0].reported.empty()))
    std::this_thread::yield();
  study.signal(SIGKILL);
  EXPECT_EQ(study.wait(), 128 + SIGKILL);
  std::vector<tune::TrialRecord> before = trials_of("k");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].state, tune::TrialState::kRunning) << "no one was left to record its end";
  auto resumed = tune(file, "--study k --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("trial 0 starts again with the same values"));
  EXPECT_THAT(log_of("k", 0), HasSubstr("resumed from epoch"));
  std::vector<tune::TrialRecord> after = trials_of("k");
  ASSERT_EQ(after.size(), 2u);
  for (const tune::TrialRecord& t : after) EXPECT_EQ(t.state, tune::TrialState::kComplete);
  EXPECT_EQ(after[0].values, before[0].values);
  EXPECT_EQ(after[0].reported.size(), 12u) << "each epoch's value once, from either process";
}

}  // namespace tune_program_test
}  // namespace kiln
