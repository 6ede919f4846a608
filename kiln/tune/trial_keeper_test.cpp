// A program's trial under its keeper (trial_keeper.h), started as the study starts it: the
// keeper ends as the program did; what the program leaves, even in a session of its own, ends
// with the trial, killed after kill_after when it ignores SIGTERM; told to stop, the keeper
// passes the signal to all, and kills all at its deadline or at a second signal; the study's
// death, however often Linux says it, is one stop.

#include "kiln/tune/trial_keeper.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "kiln/tune/trial_process.h"
#include "tests/support/process_state.h"
#include "tests/support/temp_dir.h"

namespace kiln::tune {
namespace trial_keeper_test {  // not anonymous: a unity batch shares its unit

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

bool ended(pid_t pid) { return testing::process_ended(pid); }

class TrialKeeper : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe2(said_, O_NONBLOCK), 0);  // read once the keeper has ended
    keeping_.kill_after = 0.3;
    keeping_.say_fd = said_[1];
    keeping_.told_and_stayed = "told and stayed\n";
    keeping_.left_and_stayed = "left and stayed\n";
  }
  void TearDown() override {
    ::close(said_[0]);
    ::close(said_[1]);
    if (output_ >= 0) ::close(output_);
  }
  // Starts `script` (sh -c) under a keeper; returns the keeper.
  pid_t start(const std::string& script) {
    TrialCommand command;
    command.program = "sh";
    command.arguments = {"-c", script};
    return start_program_process(command, keeping_, &output_);
  }
  // A script that leaves a process in a session of its own (`setsid`), which runs `before`
  // then writes its pid to `pid_file`; the script goes on once it has.
  static std::string leave(const std::string& before, const std::string& pid_file) {
    return "setsid sh -c \"" + before + "echo \\$\\$ > " + pid_file +
           "; exec sleep 600\" > /dev/null & while [ ! -s " + pid_file + " ]; do :; done";
  }
  // The program's output up to and including `word`'s line.
  std::string read_until(const std::string& word) {
    std::string text;
    char c;
    while (text.find(word + "\n") == std::string::npos && ::read(output_, &c, 1) == 1) text += c;
    return text;
  }
  int wait_for(pid_t keeper) {
    int status = 0;
    EXPECT_EQ(::waitpid(keeper, &status, 0), keeper);
    return status;
  }
  // What the keeper said, once it has ended.
  std::string said() {
    std::string text;
    char buffer[256];
    ssize_t got;
    while ((got = ::read(said_[0], buffer, sizeof buffer)) > 0) text.append(buffer, size_t(got));
    return text;
  }
  pid_t pid_in(const std::string& file) { return pid_t(std::stol(read_text(file))); }
  std::string read_text(const std::string& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  testing::TempDir dir_;
  TrialKeeping keeping_;
  int said_[2] = {-1, -1};
  int output_ = -1;
};

TEST_F(TrialKeeper, EndsAsTheProgramEnded) {
  EXPECT_EQ(WEXITSTATUS(wait_for(start("exit 3"))), 3);
  int status = wait_for(start("kill -USR1 $$"));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
  EXPECT_EQ(WEXITSTATUS(wait_for(start("echo out; echo err >&2"))), 0);
  EXPECT_EQ(read_until("err"), "out\nerr\n");
}

// A process in a session of its own is out of reach of its group's signals; not of the keeper.
TEST_F(TrialKeeper, WhatTheProgramLeftInASessionOfItsOwnEndsWithTheTrial) {
  std::string left = dir_.file("left.pid");
  pid_t keeper = start(leave("", left));
  EXPECT_EQ(WEXITSTATUS(wait_for(keeper)), 0);
  EXPECT_TRUE(ended(pid_in(left)));
}

TEST_F(TrialKeeper, WhatTheProgramLeftIgnoringSigtermIsKilledAfterKillAfter) {
  std::string left = dir_.file("left.pid");
  auto start_time = Clock::now();
  pid_t keeper = start(leave("trap '' TERM; ", left) + "; exit 4");
  EXPECT_EQ(WEXITSTATUS(wait_for(keeper)), 4) << "the program's status, not the leftover's";
  EXPECT_GE(Clock::now() - start_time, std::chrono::milliseconds(300));
  EXPECT_TRUE(ended(pid_in(left)));
  EXPECT_EQ(said(), "left and stayed\n");
}

TEST_F(TrialKeeper, ToldToStopItPassesTheSignalToAllThenKillsWhatStays) {
  std::string left = dir_.file("left.pid");
  pid_t keeper =
      start(leave("", left) + "; trap '' TERM; echo ready; while :; do sleep 0.05; done");
  read_until("ready");
  pid_t escaped = pid_in(left);
  ASSERT_EQ(::kill(keeper, SIGTERM), 0);
  int status = wait_for(keeper);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the program ignored SIGTERM and was killed";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_TRUE(ended(escaped));
  EXPECT_EQ(said(), "told and stayed\n");
}

TEST_F(TrialKeeper, ASecondSignalKillsAtOnce) {
  keeping_.kill_after = 600;
  pid_t keeper = start("trap '' INT TERM; echo ready; while :; do sleep 0.05; done");
  read_until("ready");
  auto start_time = Clock::now();
  ASSERT_EQ(::kill(keeper, SIGINT), 0);
  ASSERT_EQ(::kill(keeper, SIGTERM), 0);
  int status = wait_for(keeper);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_LT(Clock::now() - start_time, std::chrono::seconds(60));
}

// The study's death comes as SIGHUP, once for each of its threads: one stop, with its deadline.
TEST_F(TrialKeeper, TheStudysDeathRepeatedIsOneStop) {
  pid_t keeper = start("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  read_until("ready");
  auto start_time = Clock::now();
  for (int thread = 0; thread < 3; ++thread) ASSERT_EQ(::kill(keeper, SIGHUP), 0);
  int status = wait_for(keeper);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_GE(Clock::now() - start_time, std::chrono::milliseconds(300)) << "killed at the deadline";
  EXPECT_EQ(said(), "told and stayed\n");
}

TEST_F(TrialKeeper, AProgramThatCannotStartIsAnError) {
  TrialCommand command;
  command.program = "no-such-program-of-kiln";
  try {
    start_program_process(command, keeping_, &output_);
    FAIL() << "started";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
  }
}

}  // namespace trial_keeper_test
}  // namespace kiln::tune
