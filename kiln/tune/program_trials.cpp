#include "kiln/tune/program_trials.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/tune/command_line.h"

namespace kiln::tune {
namespace fs = std::filesystem;
namespace {

// A descriptor that poll() finds readable once `pid` has ended (a pidfd), so that the study reaps
// a trial as it ends rather than at its next look; -1 where the kernel has none (before Linux
// 5.3), and the study's periodic look finds the end instead.
int exit_descriptor(pid_t pid) {
#ifdef SYS_pidfd_open
  return int(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// KILN_METRICS_FILE, made by kiln as an empty regular file before the program starts: what is
// there after is read only as that (trial_output.h).
// Returns its device and inode, by which it is known from a file put in its place.
std::pair<dev_t, ino_t> create_metrics_file(const std::string& path) {
  std::error_code ignored;    // not there, most often
  fs::remove(path, ignored);  // a trial started again reports afresh; a link goes, not its target
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  struct stat status {};
  if (fd < 0 || ::fstat(fd, &status) != 0) {
    int error = errno;
    if (fd >= 0) ::close(fd);
    throw Error(fmt::format("kiln tune: cannot create {}: {}", path, std::strerror(error)));
  }
  ::close(fd);
  return {status.st_dev, status.st_ino};
}

}  // namespace

ProgramTrials::ProgramTrials(Study& study, const StudySetup& setup, SignalsToTrials& signals,
                             Say say)
    : study_(study),
      setup_(setup),
      signals_(signals),
      say_(std::move(say)),
      pruner_(pruner_registry().create(setup.options.pruner)),
      maximize_(setup.options.mode == ModeOrAuto::kMax) {}

ProgramTrials::~ProgramTrials() {
  for (auto& [number, trial] : running_)
    if (trial.exit_fd >= 0) ::close(trial.exit_fd);
}

pid_t ProgramTrials::start(int64_t number, const std::string& trial_dir, const std::string& log,
                           bool resumed) {
  fs::create_directories(trial_dir);
  std::string metrics = (fs::path(trial_dir) / "metrics.jsonl").string();
  std::pair<dev_t, ino_t> made = create_metrics_file(metrics);
  TrialRecord record = study_.trial(number);
  std::vector<std::string> line = trial_command_line(setup_.options.command, setup_.options.space,
                                                     record.assignment, number, trial_dir);
  TrialCommand command;
  command.program = line.front();
  command.arguments.assign(line.begin() + 1, line.end());
  command.environment = {{"KILN_TUNE_TRIAL", std::to_string(number)},
                         {"KILN_TUNE_PARAMS", record.values.dump()},
                         {"KILN_TRIAL_DIR", trial_dir},
                         {"KILN_METRICS_FILE", metrics},
                         {"KILN_TUNE_RESUMED", resumed ? "1" : "0"}};
  TrialKeeping keeping;  // the keeper has its own copy, made by fork
  keeping.kill_after = setup_.options.kill_after.amount();
  keeping.say_fd = ::fileno(setup_.out);
  keeping.told_and_stayed = fmt::format(
      "kiln tune: trial {} did not end within tune.kill_after ({} s) of being told to stop; "
      "killing it and all it started (SIGKILL)\n",
      number, keeping.kill_after);
  keeping.left_and_stayed = fmt::format(
      "kiln tune: trial {} left processes that did not end within tune.kill_after ({} s); "
      "killing them (SIGKILL)\n",
      number, keeping.kill_after);
  int output = -1;
  pid_t pid = start_program_process(command, keeping, &output);
  Running& trial = running_[number];
  trial = Running{};
  trial.pid = pid;
  trial.exit_fd = exit_descriptor(pid);
  trials_.reset();
  trial.output =
      std::make_unique<TrialOutput>(output, log, fs::path(log).filename().string(), metrics,
                                    "metrics.jsonl of trial " + std::to_string(number));
  trial.output->metrics_file_is(made.first, made.second);
  return pid;
}

void ProgramTrials::watch(int timeout_ms) {
  std::vector<pollfd> fds;
  for (const auto& [number, trial] : running_) {
    if (trial.output->fd() >= 0) fds.push_back({trial.output->fd(), POLLIN, 0});
    if (trial.exit_fd >= 0) fds.push_back({trial.exit_fd, POLLIN, 0});
  }
  ::poll(fds.data(), fds.size(), timeout_ms);  // EINTR too: the study looks at its signals
  // A keeper its program stopped (`kill -STOP $PPID`) reaps nothing and never ends: the study
  // waited forever. Each look continues them (a running one takes no notice).
  for (const auto& [number, trial] : running_) ::kill(trial.pid, SIGCONT);
  for (auto& entry : running_) {  // not a structured binding: a lambda captures it
    Running& trial = entry.second;
    take(entry.first, trial, [&trial] { return trial.output->read(); });
  }
}

void ProgramTrials::take(int64_t number, Running& trial,
                         const std::function<std::vector<MetricReport>()>& read) {
  std::vector<MetricReport> reports;
  try {
    reports = read();
  } catch (const Error& e) {
    if (!trial.failed) stop(number, trial, e.what());
    trial.failed = trial.failed.value_or(e.what());
    return;
  }
  const std::string& metric = setup_.options.metric;
  std::vector<ReportedValue> noted;  // written together, once the pruner has seen each
  for (const MetricReport& report : reports) {
    auto value = report.values.find(metric);
    if (value == report.values.end() || trial.pruned || trial.failed) continue;
    if (!report.step) {
      trial.final_value = value->second;
      continue;
    }
    trial.last_value = value->second;
    noted.push_back({*report.step, double(*report.step), value->second});
    if (!note_report(number, noted.back())) {  // the pruner reads the study again: write first
      study_.report(number, noted);
      noted.clear();
    }
    if (std::optional<std::string> why = pruner_->prune(number, known_trials(), maximize_)) {
      trial.pruned = *why;
      stop(number, trial, fmt::format("pruned at step {}: {}", *report.step, *why));
    }
  }
  study_.report(number, noted);
}

void ProgramTrials::stop(int64_t number, Running& trial, const std::string& why) {
  if (trial.told) return;
  say_(fmt::format("trial {} {}; stopping it (SIGTERM)", number, why));
  ::kill(trial.pid, SIGTERM);  // its keeper, which passes it on and kills at the deadline
  ::kill(trial.pid, SIGCONT);  // should its program have stopped it (SIGSTOP)
  trial.told = true;
}

const std::vector<TrialRecord>& ProgramTrials::known_trials() {
  if (!trials_) trials_ = study_.trials();
  return *trials_;
}

bool ProgramTrials::note_report(int64_t number, const ReportedValue& value) {
  if (!trials_) return false;  // read afresh when next needed
  if (number < 0 || size_t(number) >= trials_->size() ||
      (*trials_)[size_t(number)].number != number) {
    trials_.reset();
    return false;
  }
  // As the study keeps them: one value per step, in order of step.
  std::vector<ReportedValue>& reported = (*trials_)[size_t(number)].reported;
  auto at =
      std::lower_bound(reported.begin(), reported.end(), value.step,
                       [](const ReportedValue& kept, int64_t step) { return kept.step < step; });
  if (at != reported.end() && at->step == value.step)
    *at = value;
  else
    reported.insert(at, value);
  return true;
}

void ProgramTrials::finish(int64_t number, int status) {
  auto found = running_.find(number);
  if (found == running_.end()) return;
  Running& trial = found->second;
  if (trial.exit_fd >= 0) ::close(trial.exit_fd);
  bool metrics_too = signals_.count() < 2;  // a second Ctrl-C waits no longer
  take(number, trial, [&trial, metrics_too] { return trial.output->read_to_end(metrics_too); });
  end(number, trial, status);
  running_.erase(found);
  trials_.reset();
}

void ProgramTrials::end(int64_t number, Running& trial, int status) {
  const std::string& metric = setup_.options.metric;
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::string now = setup_.now();
  if (trial.failed) {
    study_.finish_trial(number, TrialState::kFailed, std::nullopt, *trial.failed, now);
    return say_(fmt::format("trial {} failed ({}); the study goes on", number, *trial.failed));
  }
  if (trial.pruned) {
    study_.finish_trial(number, TrialState::kPruned, trial.last_value, *trial.pruned, now);
    return say_(fmt::format("trial {} pruned ({})", number, *trial.pruned));
  }
  if (!ok && signals_.received())
    return say_(fmt::format("trial {} stopped; `kiln tune --resume` starts it again", number));
  std::optional<double> value = trial.final_value ? trial.final_value : trial.last_value;
  std::string error;
  if (!ok)
    error = fmt::format("{}: {}", process_ending(status), trial.output->last_line());
  else if (!value)
    error = fmt::format(
        "the program reported no {} (print kiln-metric {}=VALUE, or write "
        "{{\"{}\": VALUE}} to $KILN_METRICS_FILE)",
        metric, metric, metric);
  if (!error.empty()) {
    study_.finish_trial(number, TrialState::kFailed, std::nullopt, error, now);
    return say_(fmt::format("trial {} failed ({}); the study goes on", number, error));
  }
  study_.finish_trial(number, TrialState::kComplete, value, "", now);
  say_(fmt::format("trial {} complete: {} {:.6g}", number, metric, *value));
}

}  // namespace kiln::tune
