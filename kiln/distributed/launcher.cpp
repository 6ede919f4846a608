#include "kiln/distributed/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "kiln/core/child_environment.h"
#include "kiln/core/error.h"
#include "kiln/core/parent_death.h"

namespace kiln::distributed {
namespace {

using Clock = std::chrono::steady_clock;

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string ending(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

int exit_code(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

// One stream of a worker: its pipe, and the start of a line not yet ended.
struct Stream {
  int fd = -1;
  std::string partial;
  std::FILE* to = nullptr;
};

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  Stream out, err;
};

class Attempt {
 public:
  Attempt(const LaunchPlan& plan, std::vector<std::string> command, int port, int attempt,
          int signals, std::FILE* out, std::FILE* err)
      : plan_(plan),
        command_(std::move(command)),
        port_(port),
        attempt_(attempt),
        signals_(signals),
        out_(out),
        err_(err) {}

  struct Result {
    int status = 0;  // the job's exit status
    bool interrupted = false;
    std::string run_dir;
  };

  Result run() {
    for (int local = 0; local < plan_.nproc; ++local) start(local);
    std::vector<std::string> pids;
    for (const Worker& w : workers_) pids.push_back(fmt::format("rank {} pid {}", w.rank, w.pid));
    say(fmt::format("attempt {} of {}: {}", attempt_ + 1, plan_.max_restarts + 1,
                    fmt::join(pids, ", ")));
    while (busy()) wait_for_events();
    return result_;
  }

 private:
  void start(int local_rank) {
    Worker& worker = workers_.emplace_back();
    worker.rank = plan_.node_rank * plan_.nproc + local_rank;
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw Error(fmt::format("kiln launch: pipe: {}", std::strerror(errno)));
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_adddup2(&files, out[1], 1);
    posix_spawn_file_actions_adddup2(&files, err[1], 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    // Its own process group: a terminal's Ctrl-C reaches the launcher, which passes it on once.
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    std::vector<std::string> arguments = {plan_.program};
    arguments.insert(arguments.end(), command_.begin(), command_.end());
    std::vector<std::string> environment =
        environment_with(worker_variables(plan_, local_rank, port_, attempt_));
    std::vector<char*> argv = c_string_array(arguments), envp = c_string_array(environment);
    int failed = ::posix_spawn(&worker.pid, plan_.program.c_str(), &files, &attributes, argv.data(),
                               envp.data());
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attributes);
    ::close(out[1]);
    ::close(err[1]);
    if (failed != 0) {
      ::close(out[0]);
      ::close(err[0]);
      throw Error(
          fmt::format("kiln launch: cannot start {}: {}", plan_.program, std::strerror(failed)));
    }
    worker.running = true;
    worker.out = {out[0], "", out_};
    worker.err = {err[0], "", err_};
  }

  bool busy() const {
    for (const Worker& w : workers_)
      if (w.running || w.out.fd >= 0 || w.err.fd >= 0) return true;
    return false;
  }

  void wait_for_events() {
    std::vector<pollfd> fds = {{signals_, POLLIN, 0}};
    std::vector<Stream*> streams = {nullptr};
    for (Worker& w : workers_)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    int timeout = -1;
    if (kill_at_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - Clock::now());
      timeout = int(std::max<int64_t>(0, left.count()));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      throw Error(fmt::format("kiln launch: poll: {}", std::strerror(errno)));
    if (fds[0].revents) take_signals();
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) read_stream(*streams[i], rank_of(streams[i]));
    if (kill_at_ && Clock::now() >= *kill_at_) {
      for (Worker& w : workers_)
        if (w.running) {
          say(fmt::format("rank {} (pid {}) did not stop within {} s: killing it", w.rank, w.pid,
                          plan_.grace_seconds));
          ::kill(-w.pid, SIGKILL);
        }
      kill_at_.reset();
    }
  }

  int rank_of(const Stream* stream) const {
    for (const Worker& w : workers_)
      if (&w.out == stream || &w.err == stream) return w.rank;
    return -1;
  }

  void read_stream(Stream& stream, int rank) {
    char buffer[65536];
    ssize_t n = ::read(stream.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      if (!stream.partial.empty()) emit(stream, rank, stream.partial);
      stream.partial.clear();
      ::close(stream.fd);
      stream.fd = -1;
      return;
    }
    stream.partial.append(buffer, size_t(n));
    size_t start = 0, newline;
    while ((newline = stream.partial.find('\n', start)) != std::string::npos) {
      emit(stream, rank, stream.partial.substr(start, newline - start));
      start = newline + 1;
    }
    stream.partial.erase(0, start);
  }

  void emit(const Stream& stream, int rank, const std::string& line) {
    if (stream.to == out_ && line.rfind("run: ", 0) == 0) result_.run_dir = line.substr(5);
    std::fprintf(stream.to, "[rank %d] %s\n", rank, line.c_str());
    std::fflush(stream.to);
  }

  void take_signals() {
    char signal = 0;
    bool children = false;
    while (::read(signals_, &signal, 1) == 1) {
      if (signal == SIGCHLD)
        children = true;
      else
        pass_on(signal);
    }
    if (children) reap();
  }

  // A second Ctrl-C kills the workers. A second SIGTERM does not: a dying parent sends one for
  // each of its threads (core/parent_death.h), and a scheduler follows with SIGKILL anyway.
  void pass_on(int signal) {
    if (result_.interrupted) {
      if (signal != SIGINT) return;
      say(fmt::format("{} again: killing the workers", ::strsignal(signal)));
      for (Worker& w : workers_)
        if (w.running) ::kill(-w.pid, SIGKILL);
      return;
    }
    result_.interrupted = true;
    say(fmt::format("{}: passing it to the workers{}", ::strsignal(signal),
                    signal == SIGINT ? " (again to kill them)" : ""));
    for (Worker& w : workers_)
      if (w.running) ::kill(-w.pid, signal);
  }

  // Every worker that has ended; of those ending together, one killed by a signal first: when
  // one is killed, the others fail on its closed connections, and it is the one to name.
  void reap() {
    std::vector<Worker*> gone;
    for (Worker& w : workers_) {
      int status = 0;
      if (w.running && ::waitpid(w.pid, &status, WNOHANG) == w.pid) {
        w.running = false;
        w.status = status;
        gone.push_back(&w);
      }
    }
    std::stable_partition(gone.begin(), gone.end(),
                          [](const Worker* w) { return WIFSIGNALED(w->status); });
    for (const Worker* w : gone) ended(*w);
  }

  void ended(const Worker& worker) {
    bool failed = !(WIFEXITED(worker.status) && WEXITSTATUS(worker.status) == 0);
    if (!failed || stopping_ || result_.interrupted) {
      if (failed && result_.status == 0 && result_.interrupted)
        result_.status = exit_code(worker.status);
      return;
    }
    stopping_ = true;
    result_.status = exit_code(worker.status);
    say(fmt::format("rank {} (pid {}) {}: stopping the other workers", worker.rank, worker.pid,
                    ending(worker.status)));
    for (Worker& w : workers_)
      if (w.running) ::kill(-w.pid, SIGTERM);
    kill_at_ = Clock::now() + std::chrono::milliseconds(int64_t(plan_.grace_seconds * 1000));
  }

  void say(const std::string& line) {
    std::fprintf(out_, "kiln launch: %s\n", line.c_str());
    std::fflush(out_);
  }

  const LaunchPlan& plan_;
  std::vector<std::string> command_;
  int port_, attempt_, signals_;
  std::FILE *out_, *err_;
  std::vector<Worker> workers_;
  Result result_;
  bool stopping_ = false;
  std::optional<Clock::time_point> kill_at_;
};

// SIGCHLD, SIGINT and SIGTERM as bytes in a pipe to poll, written by a handler. Not a signalfd:
// that sees only signals blocked in every thread, and LibTorch starts threads of its own before
// main, where a SIGCHLD would be discarded unseen.
class LaunchSignals {
 public:
  LaunchSignals() {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0)
      throw Error(fmt::format("kiln launch: pipe: {}", std::strerror(errno)));
    read_fd_ = ends[0];
    write_fd_ = ends[1];
    struct sigaction action {};
    action.sa_handler = &LaunchSignals::handle;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &action, &before_[i]);
  }
  ~LaunchSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &before_[i], nullptr);
    ::close(read_fd_);
    ::close(write_fd_);
    write_fd_ = -1;
  }
  int fd() const { return read_fd_; }

 private:
  static void handle(int signal) {
    int saved = errno;
    char byte = char(signal);
    if (write_fd_ >= 0) [[maybe_unused]]
      ssize_t ignored = ::write(write_fd_, &byte, 1);
    errno = saved;
  }

  static constexpr std::array<int, 3> kSignals = {SIGCHLD, SIGINT, SIGTERM};
  static inline volatile sig_atomic_t write_fd_ = -1;
  std::array<struct sigaction, 3> before_{};
  int read_fd_ = -1;
};

}  // namespace

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(
        fmt::format("kiln launch: no free port for rank 0's store: {}", std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::vector<std::pair<std::string, std::string>> worker_variables(const LaunchPlan& plan,
                                                                  int local_rank, int port,
                                                                  int attempt) {
  int world = plan.nnodes * plan.nproc;
  return {{"RANK", std::to_string(plan.node_rank * plan.nproc + local_rank)},
          {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_RANK", std::to_string(local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(plan.nproc)},
          {"GROUP_RANK", std::to_string(plan.node_rank)},
          {"MASTER_ADDR", plan.master_addr},
          {"MASTER_PORT", std::to_string(port)},
          {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt)},
          {"TORCHELASTIC_MAX_RESTARTS", std::to_string(plan.max_restarts)},
          parent_variable()};  // a launcher killed with SIGKILL leaves no worker training on
}

std::vector<std::string> restart_command(const std::vector<std::string>& command,
                                         const std::string& run_dir) {
  bool train = !command.empty() && command[0] == "train";
  bool resumes = std::find(command.begin(), command.end(), "--resume") != command.end();
  if (!train || resumes || run_dir.empty()) return command;
  std::vector<std::string> again = {"train", "--resume", run_dir};
  if (std::find(command.begin(), command.end(), "--quiet") != command.end())
    again.push_back("--quiet");
  return again;
}

int launch(const LaunchPlan& plan, std::FILE* out, std::FILE* err) {
  LaunchSignals signals;
  std::vector<std::string> command = plan.command;
  for (int attempt = 0;; ++attempt) {
    int port = plan.master_port ? plan.master_port : free_port();
    Attempt::Result result = Attempt(plan, command, port, attempt, signals.fd(), out, err).run();
    if (result.status == 0 || result.interrupted) return result.status;
    if (attempt >= plan.max_restarts) {
      std::fprintf(out, "kiln launch: the job failed (status %d)%s\n", result.status,
                   plan.max_restarts ? "; no restarts left" : "");
      return result.status;
    }
    command = restart_command(plan.command, result.run_dir);
    std::fprintf(out, "kiln launch: restarting the workers (%d of %d restarts): kiln %s\n",
                 attempt + 1, plan.max_restarts,
                 fmt::format("{}", fmt::join(command, " ")).c_str());
    std::fflush(out);
  }
}

}  // namespace kiln::distributed
