#include "kiln/tune/trial_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "kiln/core/child_environment.h"
#include "kiln/core/error.h"
#include "kiln/tune/trial_keeper.h"

namespace kiln::tune {
namespace {

constexpr size_t kMaxTrials = 256;
// Read by the signal handler: plain atomics, no allocation. A trial's pid, or minus its
// keeper's (trial_keeper.h).
std::array<std::atomic<pid_t>, kMaxTrials> trial_pids{};
std::atomic<int> first_signal{0};
std::atomic<int> signal_count{0};
struct sigaction interrupt_before {
}, terminate_before{};

void pass_on(int signal) {
  int expected = 0;
  first_signal.compare_exchange_strong(expected, signal);
  int sent = signal_count.fetch_add(1) == 0 ? signal : SIGKILL;
  for (auto& slot : trial_pids) {
    pid_t p = slot.load();
    if (p > 0) ::kill(-p, sent);  // a trial's group
    if (p < 0) {  // a keeper, which kills at its second signal; woken should its program stop it
      ::kill(-p, signal);
      ::kill(-p, SIGCONT);
    }
  }
}

}  // namespace

pid_t start_trial_process(const TrialCommand& command) {
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  // Not O_CLOEXEC: the file is the trial's standard output, which must outlive its exec.
  posix_spawn_file_actions_addopen(&files, 1, command.log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  // Its own group: a terminal's Ctrl-C reaches the study, which passes it on once.
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> arguments = {command.program};
  arguments.insert(arguments.end(), command.arguments.begin(), command.arguments.end());
  std::vector<std::string> environment = environment_with(command.environment);
  std::vector<char*> argv = c_string_array(arguments), envp = c_string_array(environment);
  pid_t pid = -1;
  int failed =
      ::posix_spawn(&pid, command.program.c_str(), &files, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0)
    throw Error(
        fmt::format("kiln tune: cannot start {}: {}", command.program, std::strerror(failed)));
  return pid;
}

pid_t start_program_process(const TrialCommand& command, const TrialKeeping& keeping, int* output) {
  // Everything the keeper needs is made before the fork: after it, only calls that are safe
  // between fork and exec (trial_keeper.h).
  std::vector<std::string> arguments = {command.program};
  arguments.insert(arguments.end(), command.arguments.begin(), command.arguments.end());
  std::vector<std::string> environment = environment_with(command.environment);
  std::vector<char*> argv = c_string_array(arguments), envp = c_string_array(environment);
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    throw Error(fmt::format("kiln tune: pipe: {}", std::strerror(errno)));
  int report[2];  // the program's exec error, if any; closed by a successful exec
  if (::pipe2(report, O_CLOEXEC) != 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    throw Error(fmt::format("kiln tune: pipe: {}", std::strerror(errno)));
  }
  KeeperPlan plan;
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.output_fd = ends[1];
  plan.report_fd = report[1];
  plan.study = ::getpid();
  plan.keeping = &keeping;
  // The keeper is born with the signals it waits for blocked: none may reach the study's
  // handlers in it.
  sigset_t waited, before;
  sigemptyset(&waited);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&waited, s);
  ::pthread_sigmask(SIG_BLOCK, &waited, &before);
  pid_t pid = ::fork();
  if (pid == 0) keep_trial(plan);
  int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ::close(ends[1]);
  ::close(report[1]);
  int error = 0;
  ssize_t got = pid < 0 ? 0 : ::read(report[0], &error, sizeof error);
  ::close(report[0]);
  if (pid < 0 || got == sizeof error) {
    ::close(ends[0]);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    throw Error(fmt::format("kiln tune: cannot start {} (tune.command): {}", command.program,
                            std::strerror(pid < 0 ? fork_error : error)));
  }
  *output = ends[0];
  return pid;
}

std::optional<EndedProcess> reap_a_trial() {
  EndedProcess ended;
  ended.pid = ::waitpid(-1, &ended.status, WNOHANG);
  if (ended.pid <= 0) return std::nullopt;
  return ended;
}

std::optional<EndedProcess> wait_for_a_trial() {
  EndedProcess ended;
  ended.pid = ::waitpid(-1, &ended.status, 0);
  if (ended.pid < 0 && errno == EINTR) return std::nullopt;
  if (ended.pid < 0) throw Error(fmt::format("kiln tune: waitpid: {}", std::strerror(errno)));
  return ended;
}

std::string process_ending(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

SignalsToTrials::SignalsToTrials() {
  first_signal = 0;
  signal_count = 0;
  struct sigaction action {};
  action.sa_handler = &pass_on;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the wait returns, and the study sees the signal
  ::sigaction(SIGINT, &action, &interrupt_before);
  ::sigaction(SIGTERM, &action, &terminate_before);
}

SignalsToTrials::~SignalsToTrials() {
  ::sigaction(SIGINT, &interrupt_before, nullptr);
  ::sigaction(SIGTERM, &terminate_before, nullptr);
  for (auto& pid : trial_pids) pid = 0;
}

void SignalsToTrials::add(pid_t pid, Delivery delivery) {
  pid_t kept = delivery == Delivery::kToKeeper ? -pid : pid;
  for (auto& slot : trial_pids) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, kept)) return;
  }
  throw Error(fmt::format("kiln tune: more than {} trials at once", kMaxTrials));
}

void SignalsToTrials::remove(pid_t pid) {
  for (auto& slot : trial_pids) {
    for (pid_t kept : {pid, -pid}) {
      pid_t p = kept;
      slot.compare_exchange_strong(p, 0);
    }
  }
}

int SignalsToTrials::received() const { return first_signal.load(); }

int SignalsToTrials::count() const { return signal_count.load(); }

}  // namespace kiln::tune
