#include "kiln/tune/study_runner.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "kiln/core/error.h"
#include "kiln/core/folder_lock.h"
#include "kiln/core/parent_death.h"
#include "kiln/core/remove_tree.h"
#include "kiln/run/run_info.h"
#include "kiln/tune/program_trials.h"
#include "kiln/tune/stray_processes.h"
#include "kiln/tune/study_report.h"
#include "kiln/tune/trial_process.h"

namespace kiln::tune {
namespace fs = std::filesystem;
namespace {

// The coordinates that make `p` apply: each condition's first matching choice, up the chain.
Assignment enabling(const SearchSpace& space, const Parameter& p) {
  if (!p.when) return {};
  const Parameter& parent = space.at(p.when->parameter);
  Assignment out = enabling(space, parent);
  for (double c : parent.distribution->grid(0))
    if (p.when->holds(parent.distribution->value(c))) {
      out[parent.name] = c;
      break;
    }
  return out;
}

// A line of a worker as `kiln launch` passes it on ("[rank 1] kiln: ..."), without the prefix.
std::string without_rank(const std::string& line) {
  if (line.rfind("[rank ", 0) != 0) return line;
  size_t end = line.find("] ");
  return end == std::string::npos ? line : line.substr(end + 2);
}

// The last line of a failed trial's log that says what went wrong.
std::string error_in_log(const std::string& log) {
  std::ifstream in(log);
  std::string line, last, kiln_line;
  while (std::getline(in, line)) {
    line = without_rank(line);
    if (line.empty()) continue;
    last = line;
    if (line.rfind("kiln: ", 0) == 0) kiln_line = line;
  }
  return kiln_line.empty() ? last : kiln_line;
}

class StudyRun {
 public:
  StudyRun(Study& study, const StudySetup& setup)
      : study_(study),
        setup_(setup),
        space_(setup.options.space),
        sampler_(sampler_registry().create(setup.options.sampler, setup.seed)),
        maximize_(study.info().maximize),
        started_(std::chrono::steady_clock::now()) {
    fs::create_directories(fs::path(setup.study_dir) / "configs");
    fs::create_directories(fs::path(setup.study_dir) / "logs");
  }

  int run() {
    if (!setup_.options.command.empty()) {
      strays_ = std::make_unique<StrayCatcher>();
      programs_ = std::make_unique<ProgramTrials>(study_, setup_, signals_,
                                                  [this](const std::string& line) { say(line); });
    }
    std::vector<TrialRecord> trials = study_.trials();
    started_trials_ = int64_t(trials.size());
    for (const TrialRecord& t : trials)
      if (t.state == TrialState::kRunning) resume_trial(t.number);
    while (true) {
      while (can_start()) start_next();
      if (running_.empty()) break;
      std::optional<EndedProcess> ended = programs_ ? next_program_ending() : wait_for_a_trial();
      if (!ended) continue;
      auto found = running_.find(ended->pid);
      if (found == running_.end()) continue;
      signals_.remove(ended->pid);
      int64_t number = found->second;
      running_.erase(found);
      finish(number, ended->status);
    }
    say_best();
    return signals_.received() ? 128 + signals_.received() : 0;
  }

 private:
  bool can_start() {
    if (signals_.received() || exhausted_) return false;
    if (int64_t(running_.size()) >= setup_.options.parallel) return false;
    if (started_trials_ >= setup_.options.trials) return false;
    if (setup_.options.time) {
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (elapsed >= setup_.options.time->amount()) return false;
    }
    return true;
  }

  void start_next() {
    std::vector<TrialRecord> trials = study_.trials();
    std::optional<Assignment> assignment =
        sampler_->sample(space_, trial_views(trials, maximize_), int64_t(trials.size()));
    if (!assignment) {
      exhausted_ = true;
      say(fmt::format("the sampler has no more trials to give after {}", trials.size()));
      return;
    }
    int64_t number = study_.start_trial(space_, *assignment, setup_.now());
    started_trials_ += 1;
    if (!programs_)  // a program's values are in the study and its environment
      std::ofstream(config_path(number))
          << to_yaml(trial_config(setup_, space_, *assignment, number).tree);
    say(fmt::format("trial {} started: {}", number, space_.values(*assignment).dump()));
    launch(number, false);
  }

  // A program's trials are watched as they run: their output is read for reports while the
  // study waits (until one ends, or a fifth of a second, then it looks for ended ones).
  // A keeper killed leaves what it kept to the study (stray_processes.h): it goes at once.
  std::optional<EndedProcess> next_program_ending() {
    programs_->watch(200);
    std::optional<EndedProcess> ended = reap_a_trial();
    if (!ended) return ended;
    // A stray that ends may leave children it started since the last look: they go too.
    bool keeper = running_.count(ended->pid) > 0;
    if (keeper && !WIFSIGNALED(ended->status)) return ended;
    std::set<pid_t> keepers;
    for (const auto& [pid, number] : running_)
      if (pid != ended->pid) keepers.insert(pid);
    size_t killed = kill_strays(keepers);
    if (keeper && killed > 0)
      say(fmt::format("trial {}: its keeper {}; the {} process(es) it kept are killed",
                      running_.at(ended->pid), process_ending(ended->status), killed));
    return ended;
  }

  // A study killed with SIGKILL leaves its trials to stop on their own (core/parent_death.h):
  // each saves a checkpoint as it ends. Resuming, wait for that instead of failing on its lock.
  void wait_for_earlier_process(int64_t number) const {
    std::string run_dir = run_dir_of(number);
    std::optional<std::string> holder = FolderLock::holder(run_dir);
    if (!holder) return;
    say(fmt::format("trial {}: waiting for its earlier process (pid {}) to stop", number, *holder));
    if (!FolderLock::wait_until_free(run_dir, std::chrono::minutes(2)))
      throw Error(
          fmt::format("trial {}'s run folder {} is still held by pid {}; stop that process, then "
                      "kiln tune --resume again",
                      number, run_dir, FolderLock::holder(run_dir).value_or(*holder)));
  }

  // A trial the study left running: its run goes on from its checkpoint, unless it ended
  // after the study was killed and before it could record the end.
  void resume_trial(int64_t number) {
    if (programs_) return launch(number, true);  // a program starts again, told it is resumed
    wait_for_earlier_process(number);
    std::string status = text_at(run_record_of(number), "status");
    if (status != "finished" && status != "pruned") return launch(number, true);
    say(fmt::format("trial {} had ended ({}) while no study watched it", number, status));
    finish(number, 0);
  }

  void launch(int64_t number, bool resume) {
    std::string run_dir = run_dir_of(number);
    if (programs_) {
      if (resume) say(fmt::format("trial {} starts again with the same values", number));
      pid_t pid = programs_->start(number, run_dir, log_path(number), resume);
      signals_.add(pid, SignalsToTrials::Delivery::kToKeeper);
      running_[pid] = number;
      return;
    }
    TrialCommand command;
    command.program = setup_.program;
    // A trial of several processes is a job of the launcher, which passes a signal on to them.
    if (setup_.options.nproc > 1)
      command.arguments = {"launch", "--nproc", std::to_string(setup_.options.nproc), "--"};
    bool checkpointed = fs::exists(fs::path(run_dir) / "checkpoints" / "latest");
    if (resume && checkpointed) {
      command.arguments.insert(command.arguments.end(), {"train", "--resume", run_dir});
      say(fmt::format("trial {} resumes from its last checkpoint", number));
    } else {
      if (fs::exists(run_dir)) remove_tree(run_dir);  // stopped before its first checkpoint
      command.arguments.insert(command.arguments.end(),
                               {"train", config_path(number), "--run-dir", run_dir});
      if (resume) say(fmt::format("trial {} starts again (it had no checkpoint)", number));
    }
    command.environment = {{"KILN_TUNE_STUDY", study_.path()},
                           {"KILN_TUNE_TRIAL", std::to_string(number)},
                           parent_variable()};
    command.log = log_path(number);
    pid_t pid = start_trial_process(command);
    signals_.add(pid);
    running_[pid] = number;
  }

  void finish(int64_t number, int status) {
    if (programs_) return programs_->finish(number, status);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && signals_.received()) {
      say(fmt::format("trial {} stopped; `kiln tune --resume` goes on with it", number));
      return;
    }
    if (!ok) {
      std::string error =
          fmt::format("{}: {}", process_ending(status), error_in_log(log_path(number)));
      study_.finish_trial(number, TrialState::kFailed, std::nullopt, error, setup_.now());
      say(fmt::format("trial {} failed ({}); the study goes on", number, error));
      return;
    }
    Json record = run_record_of(number);
    if (text_at(record, "status") == "pruned") {
      std::optional<double> last;
      TrialRecord trial = study_.trial(number);
      if (!trial.reported.empty()) last = trial.reported.back().value;
      std::string reason = text_at(record, "stop_reason");
      study_.finish_trial(number, TrialState::kPruned, last, reason, setup_.now());
      say(fmt::format("trial {} pruned ({})", number, reason));
      return;
    }
    std::optional<double> value = final_value(number);
    if (!value) {
      std::string error = fmt::format("the run logged no {} (tune.metric)", metric());
      study_.finish_trial(number, TrialState::kFailed, std::nullopt, error, setup_.now());
      say(fmt::format("trial {} failed: {}", number, error));
      return;
    }
    study_.finish_trial(number, TrialState::kComplete, value, "", setup_.now());
    say(fmt::format("trial {} complete: {} {:.6g}", number, metric(), *value));
  }

  // The trial's run.json; an empty object when it is missing, unreadable or damaged: the trial
  // then counts as ended without a value.
  Json run_record_of(int64_t number) const {
    try {
      return run::read_record(run_dir_of(number));
    } catch (const Error&) {
      return Json::object();
    }
  }

  // The trial's summary.json, as run_record_of reads run.json.
  Json summary_of(int64_t number) const {
    try {
      return run::read_summary(run_dir_of(number)).value_or(Json::object());
    } catch (const Error&) {
      return Json::object();
    }
  }

  // The text at `key` of a run file's object; "" when absent or not text (a hand-edited file).
  static std::string text_at(const Json& object, const char* key) {
    const Json& value = object.value(key, Json());
    return value.is_string() ? value.get<std::string>() : "";
  }

  std::optional<double> final_value(int64_t number) const {
    const Json summary = summary_of(number);
    const Json& final_values = summary.value("final", Json());
    if (!final_values.is_object() || !final_values.contains(metric()) ||
        !final_values[metric()].is_number())
      return std::nullopt;
    return final_values[metric()].get<double>();
  }

  void say_best() const {
    std::optional<TrialRecord> best = best_trial(study_.trials(), maximize_);
    if (best)
      say(fmt::format("best: trial {}, {} {:.6g}, {}", best->number, metric(), *best->value,
                      best->values.dump()));
  }

  void say(const std::string& line) const {
    std::fprintf(setup_.out, "kiln tune: %s\n", line.c_str());
    std::fflush(setup_.out);
  }

  const std::string& metric() const { return setup_.options.metric; }
  std::string run_dir_of(int64_t number) const {
    return (fs::path(setup_.study_dir) / trial_folder(number)).string();
  }
  std::string config_path(int64_t number) const {
    return (fs::path(setup_.study_dir) / "configs" / (trial_folder(number) + ".yaml")).string();
  }
  std::string log_path(int64_t number) const {
    return (fs::path(setup_.study_dir) / "logs" / (trial_folder(number) + ".log")).string();
  }

  Study& study_;
  const StudySetup& setup_;
  const SearchSpace& space_;
  std::unique_ptr<Sampler> sampler_;
  bool maximize_;
  std::chrono::steady_clock::time_point started_;
  SignalsToTrials signals_;
  std::unique_ptr<StrayCatcher> strays_;     // a study of a program's: a subreaper
  std::unique_ptr<ProgramTrials> programs_;  // a study of a program's: its trials' state
  std::map<pid_t, int64_t> running_;
  bool exhausted_ = false;
  int64_t started_trials_ = 0;  // in the study: this run's and earlier runs'
};

}  // namespace

RawConfig trial_config(const StudySetup& setup, const SearchSpace& space,
                       const Assignment& assignment, int64_t number) {
  RawConfig config;
  config.tree = setup.base_config;
  space.apply(assignment, config, fmt::format("trial {}", number));
  // One trial of several processes is left to the launcher, which divides the cores among them.
  if (setup.options.parallel > 1) {
    int64_t processes = setup.options.parallel * setup.options.nproc;
    set_config_value(config, "runtime.threads", std::max<int64_t>(1, setup.cores / processes),
                     "kiln tune");
  }
  return config;
}

void check_space(const StudySetup& setup) {
  // A program's parameters are the names of its command's placeholders, not config paths: any
  // name is one (`a.b[0]` was refused, as no path of the study's config).
  if (!setup.options.command.empty()) return;
  const SearchSpace& space = setup.options.space;
  for (const Parameter& p : space.parameters())
    for (double coordinate : p.distribution->grid(3)) {
      Assignment assignment = enabling(space, p);
      assignment[p.name] = coordinate;
      Json value = p.distribution->value(coordinate);
      try {
        setup.check_config(trial_config(setup, space, assignment, 0));
      } catch (const ConfigError& e) {
        throw ConfigError("tune.space." + p.name, "",
                          fmt::format("with {} = {}, a trial's config is wrong: {}", p.name,
                                      show_value(value), e.what()));
      }
    }
}

int run_study(Study& study, const StudySetup& setup) { return StudyRun(study, setup).run(); }

}  // namespace kiln::tune
