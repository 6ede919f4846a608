#pragma once
// What `kiln tune show` tells of a study: its trials as a table, the best one, how much each
// parameter mattered, and the best trial's config ready for `kiln train`.
// Torch-free. Thread-safety: pure functions.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/tune/study.h"

namespace kiln::tune {

/// The complete trial with the best value; nothing before one completes.
std::optional<TrialRecord> best_trial(const std::vector<TrialRecord>& trials, bool maximize);

/// One row per trial: number, state, value, each parameter's value, and a failure's error or a
/// pruned trial's reason.
std::string trials_table(const StudyInfo& info, const SearchSpace& space,
                         const std::vector<TrialRecord>& trials);

/// Each parameter's importance: the share of the complete trials' value variance that grouping
/// them by the parameter explains (the correlation ratio η²: by value for a choice, by quantile
/// bins for numbers, trials where it did not apply a group of their own), scaled to sum to 1.
/// Empty with fewer than 3 complete trials or when every value is the same.
std::vector<std::pair<std::string, double>> importance(const SearchSpace& space,
                                                       const std::vector<TrialRecord>& trials);

/// Each parameter's importance by fANOVA (fanova.h, as Optuna's default evaluator) over the
/// complete trials: the parameters every one of them has, scaled to sum to 1, most important
/// first. Empty with fewer than 3 complete trials or when every value is the same.
std::vector<std::pair<std::string, double>> fanova_importance(
    const SearchSpace& space, const std::vector<TrialRecord>& trials);

/// The study's config with `trial`'s values set, without its `tune` section.
Json trial_config_tree(const StudyInfo& info, const SearchSpace& space, const TrialRecord& trial);

/// The search space a study saved with its config.
SearchSpace study_space(const StudyInfo& info);

}  // namespace kiln::tune
