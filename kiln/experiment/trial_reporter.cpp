#include "kiln/experiment/trial_reporter.h"

#include <fmt/format.h>

#include <cstdlib>

#include "kiln/core/error.h"

namespace kiln::experiment {

std::shared_ptr<TrialReporter> TrialReporter::from_environment() {
  const char* database = std::getenv("KILN_TUNE_STUDY");
  const char* number = std::getenv("KILN_TUNE_TRIAL");
  if (!database || !number) return nullptr;
  char* end = nullptr;
  long long parsed = std::strtoll(number, &end, 10);
  KILN_CHECK(*number && *end == 0 && parsed >= 0,
             "KILN_TUNE_TRIAL is \"{}\": kiln tune sets it to the trial's number", number);
  return std::make_shared<TrialReporter>(database, parsed);
}

TrialReporter::TrialReporter(const std::string& database, int64_t number)
    : study_(tune::Study::open(database)), number_(number) {
  type = "tune_trial";
  tune::StudyInfo info = study_.info();
  metric_ = info.metric;
  maximize_ = info.maximize;
  Json spec = info.config.contains("tune") ? info.config["tune"].value("pruner", Json("none"))
                                           : Json("none");
  ComponentSpec pruner("pruner");
  pruner.spec = tune::pruner_registry().resolve(spec, {"tune.pruner", nullptr});
  pruner.path = "tune.pruner";
  pruner_ = tune::pruner_registry().create(pruner);
}

void TrialReporter::on_validation_end(engine::TrainerView& view,
                                      const engine::MetricValues& values) {
  auto value = values.find(metric_);
  if (value == values.end()) return;
  const Progress& progress = view.progress();
  study_.report(number_, {progress.steps, progress.epochs, value->second});
  pruned_ = pruner_->prune(number_, study_.trials(), maximize_);
  if (pruned_)
    view.say(fmt::format("trial {} pruned at step {}: {}", number_, progress.steps, *pruned_));
}

}  // namespace kiln::experiment
