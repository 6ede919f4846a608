#pragma once
// A run that is a trial of a study (`kiln tune` starts it with KILN_TUNE_STUDY, the study's
// database, and KILN_TUNE_TRIAL, its number): after each validation it reports the study's
// metric into the database, and when the study's pruner says so it stops the run through the
// trainer's ordinary early stop (a checkpoint is saved; run.json says `pruned`).
// Thread-safety: the training thread only (a Callback).

#include <memory>
#include <optional>
#include <string>

#include "kiln/engine/callback.h"
#include "kiln/tune/pruner.h"
#include "kiln/tune/study.h"

namespace kiln::experiment {

class TrialReporter : public engine::Callback {
 public:
  /// The reporter of the trial the environment names; null for a run that is no trial.
  static std::shared_ptr<TrialReporter> from_environment();
  TrialReporter(const std::string& database, int64_t number);

  void on_validation_end(engine::TrainerView& view, const engine::MetricValues& values) override;
  std::optional<std::string> should_stop() const override { return pruned_; }
  /// Why the pruner stopped the trial; nothing while it goes on.
  const std::optional<std::string>& pruned() const { return pruned_; }

 private:
  tune::Study study_;
  int64_t number_;
  std::string metric_;
  bool maximize_;
  std::unique_ptr<tune::Pruner> pruner_;
  std::optional<std::string> pruned_;
};

}  // namespace kiln::experiment
