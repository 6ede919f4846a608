// kiln config show CONFIG... [--set K=V]...: the resolved config, every default filled in.

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/config.h"
#include "kiln/experiment/experiment_config.h"

namespace kiln::cli {

void add_config_command(CLI::App& app, Action& action) {
  auto* config = app.add_subcommand("config", "Inspect configs");
  config->require_subcommand(1);
  auto* show = config->add_subcommand("show", "Print the resolved config (all defaults filled in)");
  auto args = std::make_shared<ConfigArgs>();
  args->add_to(*show);
  show->callback([&action, args] {
    action = [args] {
      RawConfig raw = load_config(args->files, args->overrides);
      experiment::ExperimentConfig parsed = experiment::parse_experiment(raw);
      std::fputs(to_yaml(experiment::resolved_config(parsed)).c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace kiln::cli
