// The study's strays (stray_processes.h): the children a process has are found in /proc; every
// child that is not a keeper is killed with what it started, a keeper's own are left alone; as
// a subreaper the study inherits what a dead child started, and kills and reaps it at the end.

#include "kiln/tune/stray_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "tests/support/process_state.h"

namespace kiln::tune {
namespace stray_processes_test {  // not anonymous: a unity batch shares its unit

// A child that starts a grandchild in a session of its own, says its pid, then waits (or, when
// `leaves`, ends at once and so leaves the grandchild to whoever reaps orphans).
struct Family {
  pid_t child = -1, grandchild = -1;
};

Family start_family(bool leaves) {
  int said[2];
  EXPECT_EQ(::pipe(said), 0);
  Family family;
  family.child = ::fork();
  if (family.child == 0) {
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();
      while (true) ::pause();
    }
    (void)!::write(said[1], &grandchild, sizeof grandchild);
    if (leaves) ::_exit(0);
    while (true) ::pause();
  }
  ::close(said[1]);
  EXPECT_EQ(::read(said[0], &family.grandchild, sizeof family.grandchild),
            ssize_t(sizeof family.grandchild));
  ::close(said[0]);
  return family;
}

bool ends_within_a_minute(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline && !testing::process_ended(pid)) {
  }
  return testing::process_ended(pid);
}

bool listed(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

TEST(StrayProcesses, AChildAndWhatItStartedAreKilled) {
  Family family = start_family(false);
  EXPECT_TRUE(listed(children_of(::getpid()), family.child));
  EXPECT_TRUE(listed(children_of(family.child), family.grandchild));
  EXPECT_EQ(kill_strays({}), 2u);
  int status = 0;
  ASSERT_EQ(::waitpid(family.child, &status, 0), family.child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(ends_within_a_minute(family.grandchild)) << "in a session of its own";
}

TEST(StrayProcesses, AKeeperAndItsOwnAreLeftAlone) {
  Family family = start_family(false);
  EXPECT_EQ(kill_strays({family.child}), 0u);
  EXPECT_FALSE(testing::process_ended(family.child));
  EXPECT_FALSE(testing::process_ended(family.grandchild));
  ::kill(family.grandchild, SIGKILL);
  ::kill(family.child, SIGKILL);
  ::waitpid(family.child, nullptr, 0);
}

TEST(StrayProcesses, AnEndedProcessHasNoChildren) {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(children_of(child).empty());
}

TEST(StrayProcesses, ACatcherInheritsWhatADeadChildLeftAndEndsIt) {
  Family family;
  {
    StrayCatcher catcher;
    family = start_family(true);
    ::waitpid(family.child, nullptr, 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (std::chrono::steady_clock::now() < deadline &&
           !listed(children_of(::getpid()), family.grandchild)) {
    }
    EXPECT_TRUE(listed(children_of(::getpid()), family.grandchild)) << "ours, not init's";
  }
  EXPECT_TRUE(testing::process_ended(family.grandchild)) << "killed and reaped at the end";
  EXPECT_EQ(::kill(family.grandchild, 0), -1) << "reaped, not a zombie";
  int subreaper = 1;
  ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
  EXPECT_EQ(subreaper, 0) << "an ordinary process again";
}

}  // namespace stray_processes_test
}  // namespace kiln::tune
