#include "kiln/tune/tune_options.h"

namespace kiln::tune {
namespace {

// The experiment config reads and checks `tune:` with every config; `kiln train` leaves it be.
[[maybe_unused]] const bool kTuneSectionRegistered = register_options_section<TuneOptions>(
    "tune", "Hyper-parameter search for `kiln tune` (docs/tuning.md); `kiln train` ignores it.");

}  // namespace

std::optional<TuneOptions> tune_section(const ConfigSections& sections) {
  auto section = sections.find("tune");
  return section == sections.end()
             ? std::nullopt
             : read_resolved_section<TuneOptions>(section->second.resolved, "tune");
}

void TuneOptions::describe(Schema& s) {
  s.field("metric", metric, "The tag a trial is judged by (its last value); \"\": train.monitor.");
  s.field("mode", mode, "min or max: which way the metric is better; auto: train.mode.");
  s.field("trials", trials, "Trials to run in all (a grid may end sooner).").min(1);
  s.field("time", time, "Start no trial after this long (30 min, 2 h); absent: no limit.")
      .check(
          [](const std::optional<Period>& p) { return !p || p->unit() == Period::Unit::kSeconds; },
          "a time such as 30 min");
  s.field("parallel", parallel, "Trials run at once, the cores divided among them.").min(1);
  s.field("nproc", nproc,
          "Processes each trial trains on, data-parallel (kiln launch --nproc, "
          "docs/distributed.md); 1: a plain kiln train.")
      .min(1);
  s.field("seed", seed, "The sampler's seed; absent: the config's seed.");
  s.field("sampler", sampler,
          "How each trial's parameters are chosen: random, grid, tpe or cmaes.");
  s.field("pruner", pruner, "How unpromising trials are stopped early: none, asha or median.");
  s.field("space", space, "The tuned parameters: config path -> distribution (docs/tuning.md).");
  s.field("kill_after", kill_after,
          "How long a trial's processes have to end once told to (SIGTERM: pruned, failed, "
          "Ctrl-C, the study ending) before they are killed (SIGKILL).")
      .check([](const Period& p) { return p.unit() == Period::Unit::kSeconds && p.amount() > 0; },
             "a time such as 30 s");
  s.field("command", command,
          "A program each trial runs instead of kiln train, e.g. [python3, train.py, --lr, "
          "\"{lr}\"]: {NAME} is the trial's value of parameter NAME; it reports by printing "
          "kiln-metric NAME=VALUE step=N (docs/tuning.md).");
}

}  // namespace kiln::tune
