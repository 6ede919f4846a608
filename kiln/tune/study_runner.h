#pragma once
// Runs a study's trials (`kiln tune`): each an ordinary `kiln train` of the base config with the
// trial's sampled values set (a `kiln launch` of it with `nproc` above 1), in
// STUDY_DIR/trial-NNNN, `parallel` at a time with the cores divided among them; each ends
// complete (its metric's last value), failed (its error kept, the study goes on) or, stopped by
// a signal, still running, for `kiln tune --resume` to continue from its checkpoint.
// Torch-free. Thread-safety: one study per process.

#include "kiln/core/config.h"
#include "kiln/tune/study.h"
#include "kiln/tune/study_setup.h"

namespace kiln::tune {

/// The config of a trial: the base config with `assignment` set (and its threads).
RawConfig trial_config(const StudySetup& setup, const SearchSpace& space,
                       const Assignment& assignment, int64_t number);

/// Checks every parameter's values (each end of a range, each choice) through `check_config`
/// before any trial runs; throws ConfigError at tune.space.PARAMETER naming the value.
void check_space(const StudySetup& setup);

/// Runs (or, for a study with running trials, resumes) the study until its trials are done, its
/// time is up, its sampler has no more, or a signal stops it. Returns the exit status: 0, or
/// 128 + the signal.
int run_study(Study& study, const StudySetup& setup);

}  // namespace kiln::tune
