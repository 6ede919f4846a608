#include "kiln/tune/trial_keeper.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

// Everything here runs in a child of fork() whose parent may have had other threads: no
// allocation, no locks, no stdio; only system calls and memory of its own.
namespace kiln::tune {
namespace {

// How many descendants one look at /proc finds at most; those past it are found by a later
// look (the killing repeats until none is left).
constexpr size_t kMaxKept = 4096;
pid_t descendants[kMaxKept];
char children_text[kMaxKept * 8];

// Writes `value` in decimal at `out`; returns the end.
char* put_number(char* out, long value) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = char('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (count > 0) *out++ = digits[--count];
  return out;
}

char* put_text(char* out, const char* text) {
  while (*text) *out++ = *text++;
  return out;
}

bool known(size_t count, pid_t pid) {
  for (size_t i = 0; i < count; ++i)
    if (descendants[i] == pid) return true;
  return false;
}

// Adds to descendants[count..] the children that task `tid` of `pid` started; returns the count.
size_t add_children_of_task(pid_t pid, const char* tid, size_t count) {
  char path[96];
  char* end = put_text(put_number(put_text(path, "/proc/"), pid), "/task/");
  *put_text(put_text(end, tid), "/children") = '\0';
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return count;  // ended meanwhile
  size_t size = 0;
  ssize_t got;
  while (size < sizeof children_text - 1 &&
         (got = ::read(fd, children_text + size, sizeof children_text - 1 - size)) > 0)
    size += size_t(got);
  ::close(fd);
  long child = 0;
  bool in_number = false;
  for (size_t i = 0; i <= size && count < kMaxKept; ++i) {
    char c = i < size ? children_text[i] : ' ';
    if (c >= '0' && c <= '9') {
      child = child * 10 + (c - '0');
      in_number = true;
    } else if (in_number) {
      if (!known(count, pid_t(child))) descendants[count++] = pid_t(child);
      child = 0;
      in_number = false;
    }
  }
  return count;
}

// Adds the children of every thread of `pid`: a thread's children are listed under it.
size_t add_children_of(pid_t pid, size_t count) {
  char path[64];
  *put_text(put_number(put_text(path, "/proc/"), pid), "/task") = '\0';
  int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return count;
  alignas(8) char entries[4096];
  ssize_t got;
  while ((got = ::getdents64(fd, entries, sizeof entries)) > 0) {
    for (ssize_t at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
      at += entry->d_reclen;
      if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9')
        count = add_children_of_task(pid, entry->d_name, count);
    }
  }
  ::close(fd);
  return count;
}

// Sends `signal` to every process descended from this one (looked up first, then signalled, so
// that one ending as it is told cannot hide its children); returns how many were found.
size_t signal_descendants(int signal) {
  size_t count = add_children_of(::getpid(), 0);
  for (size_t next = 0; next < count; ++next) count = add_children_of(descendants[next], count);
  for (size_t i = 0; i < count; ++i) ::kill(descendants[i], signal);
  return count;
}

struct Keeper {
  const TrialKeeping* keeping;
  pid_t program = -1;
  int program_status = 0;
  bool program_ended = false;
  int signals = 0;            // SIGINT and SIGTERM from the study
  bool study_gone = false;    // SIGHUP: the study died
  const char* why = nullptr;  // the line said at the deadline; null while none is set
  timespec deadline{};
  bool kill_now = false;
};

timespec now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}

double seconds_between(const timespec& from, const timespec& to) {
  return double(to.tv_sec - from.tv_sec) + double(to.tv_nsec - from.tv_nsec) * 1e-9;
}

void set_deadline(Keeper& keeper, const char* why) {
  if (keeper.why) return;  // the first deadline holds
  keeper.why = why;
  double grace = keeper.keeping->kill_after;
  keeper.deadline = now();
  keeper.deadline.tv_sec += time_t(grace);
  keeper.deadline.tv_nsec += long((grace - double(time_t(grace))) * 1e9);
  if (keeper.deadline.tv_nsec >= 1000000000L) {
    keeper.deadline.tv_sec += 1;
    keeper.deadline.tv_nsec -= 1000000000L;
  }
}

void note_end(Keeper& keeper, pid_t pid, int status) {
  if (pid != keeper.program) return;
  keeper.program_ended = true;
  keeper.program_status = status;
}

// Reaps the children that have ended; false once none is left.
bool reap(Keeper& keeper) {
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      note_end(keeper, pid, status);
      continue;
    }
    return !(pid < 0 && errno == ECHILD);
  }
}

// SIGKILL for every descendant until none is left (those it leaves come to the keeper). Every
// child that has ended is reaped before the next look at /proc: one look per child reaped made
// 5,000 leftover processes take 100 s to end.
void kill_all(Keeper& keeper) {
  while (true) {
    signal_descendants(SIGKILL);
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) return;
    note_end(keeper, pid, status);
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) note_end(keeper, pid, status);
  }
}

// Ends as the program ended: with its exit status, or killed by its signal (without a core).
[[noreturn]] void end_as(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  int signal = WTERMSIG(status);
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), signal);
  ::_exit(128 + signal);
}

void say(const TrialKeeping& keeping, const char* line) {
  (void)!::write(keeping.say_fd, line, std::strlen(line));
}

// SIGINT or SIGTERM from the study, or SIGHUP for its death: Linux sends the parent-death signal
// again as each of the study's threads ends, so SIGHUP counts once.
void on_signal(Keeper& keeper, int signal) {
  if (signal == SIGHUP) {
    if (keeper.study_gone) return;
    keeper.study_gone = true;
    if (keeper.signals > 0) return;  // told already: its deadline holds
  } else if (keeper.signals++ > 0) {
    keeper.kill_now = true;  // a second Ctrl-C: the user waits no longer
    return;
  }
  signal_descendants(signal == SIGHUP ? SIGTERM : signal);
  set_deadline(keeper, keeper.keeping->told_and_stayed.c_str());
}

void ignore_child_signal(int) {}

[[noreturn]] void start_program(const KeeperPlan& plan, pid_t keeper) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // should the keeper itself be killed
  if (::getppid() != keeper) ::_exit(127);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(plan.output_fd, 1);
  ::dup2(plan.output_fd, 2);
  ::execvpe(plan.argv[0], plan.argv, plan.envp);
  int error = errno;
  (void)!::write(plan.report_fd, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

void keep_trial(const KeeperPlan& plan) {
  ::setpgid(0, 0);  // a terminal's Ctrl-C reaches the study, which passes it on once
  ::prctl(PR_SET_PDEATHSIG, SIGHUP);
  if (::getppid() != plan.study) ::_exit(127);  // the study died before the request was made
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The study's handlers are of no use here: the keeper takes its signals with sigtimedwait.
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
  ::signal(SIGCHLD, &ignore_child_signal);  // so that an ended child is a signal to wait for
  ::signal(SIGPIPE, SIG_IGN);               // the study's output may be gone
  Keeper keeper{plan.keeping};
  pid_t self = ::getpid();
  keeper.program = ::fork();
  if (keeper.program == 0) start_program(plan, self);
  ::close(plan.output_fd);
  ::close(plan.report_fd);
  if (keeper.program < 0) ::_exit(127);
  sigset_t waited;
  sigemptyset(&waited);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&waited, s);
  while (true) {
    if (!reap(keeper)) end_as(keeper.program_status);
    if (keeper.program_ended && !keeper.why) {
      signal_descendants(SIGTERM);  // what it left ends with it
      set_deadline(keeper, plan.keeping->left_and_stayed.c_str());
    }
    double left = keeper.why ? seconds_between(now(), keeper.deadline) : 1.0;
    if (keeper.kill_now || left <= 0) {
      if (!keeper.kill_now) say(*plan.keeping, keeper.why);
      kill_all(keeper);
      continue;
    }
    // At most a second: a look now and then, should a child's end signal be missed.
    double wait = left < 1.0 ? left : 1.0;
    timespec timeout{time_t(wait), long((wait - double(time_t(wait))) * 1e9)};
    int signal = ::sigtimedwait(&waited, nullptr, &timeout);
    if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) on_signal(keeper, signal);
  }
}

}  // namespace kiln::tune
