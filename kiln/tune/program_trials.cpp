#include "kiln/tune/program_trials.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/tune/command_line.h"

namespace kiln::tune {
namespace fs = std::filesystem;

ProgramTrials::ProgramTrials(Study& study, const StudySetup& setup, SignalsToTrials& signals,
                             Say say)
    : study_(study),
      setup_(setup),
      signals_(signals),
      say_(std::move(say)),
      pruner_(pruner_registry().create(setup.options.pruner)),
      maximize_(setup.options.mode == ModeOrAuto::kMax) {}

pid_t ProgramTrials::start(int64_t number, const std::string& trial_dir, const std::string& log,
                           bool resumed) {
  fs::create_directories(trial_dir);
  std::string metrics = (fs::path(trial_dir) / "metrics.jsonl").string();
  std::error_code ignored;       // not there, most often
  fs::remove(metrics, ignored);  // a trial started again reports afresh
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
  int output = -1;
  pid_t pid = start_program_process(command, &output);
  Running& trial = running_[number];
  trial = Running{};
  trial.pid = pid;
  trial.output =
      std::make_unique<TrialOutput>(output, log, fs::path(log).filename().string(), metrics,
                                    "metrics.jsonl of trial " + std::to_string(number));
  return pid;
}

void ProgramTrials::watch(int timeout_ms) {
  std::vector<pollfd> fds;
  for (const auto& [number, trial] : running_)
    if (trial.output->fd() >= 0) fds.push_back({trial.output->fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), timeout_ms);  // EINTR too: the study looks at its signals
  for (auto& entry : running_) {               // not a structured binding: a lambda captures it
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
  for (const MetricReport& report : reports) {
    auto value = report.values.find(metric);
    if (value == report.values.end() || trial.pruned || trial.failed) continue;
    if (!report.step) {
      trial.final_value = value->second;
      continue;
    }
    trial.last_value = value->second;
    study_.report(number, {*report.step, double(*report.step), value->second});
    if (std::optional<std::string> why = pruner_->prune(number, study_.trials(), maximize_)) {
      trial.pruned = *why;
      stop(number, trial, fmt::format("pruned at step {}: {}", *report.step, *why));
    }
  }
}

void ProgramTrials::stop(int64_t number, Running& trial, const std::string& why) {
  say_(fmt::format("trial {} {}; stopping it (SIGTERM)", number, why));
  ::kill(-trial.pid, SIGTERM);
}

void ProgramTrials::finish(int64_t number, int status) {
  auto found = running_.find(number);
  if (found == running_.end()) return;
  Running& trial = found->second;
  ::kill(-trial.pid, SIGTERM);  // what it left running in its group ends with it
  take(number, trial, [&trial] { return trial.output->read_to_end(); });
  end(number, trial, status);
  running_.erase(found);
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
