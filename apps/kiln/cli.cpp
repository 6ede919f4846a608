#include "apps/kiln/cli.h"

#include <torch/torch.h>

#include <cstdio>

#include "kiln/core/error.h"
#include "kiln/core/plugin.h"
#include "kiln/core/registry.h"
#include "kiln/engine/run_dir.h"

namespace kiln {
namespace {

int report(const char* kind, const std::string& message, int code) {
  std::fprintf(stderr, "kiln: %s%s\n", kind, message.c_str());
  return code;
}

// The one place where errors become exit codes.
int run_action(const cli::Action& action) {
  try {
    return action();
  } catch (const ConfigError& e) {
    return report("", e.what(), 2);
  } catch (const UsageError& e) {
    return report("usage error: ", e.what(), 2);
  } catch (const InternalError& e) {
    return report("", e.what(), 3);
  } catch (const Error& e) {
    return report("error: ", e.what(), 1);
  } catch (const c10::Error& e) {
    return report("internal error in LibTorch: ", e.what_without_backtrace(), 3);
  } catch (const std::exception& e) {
    return report("internal error: ", e.what(), 3);
  }
}

std::string& invocation_text() {
  static std::string text;
  return text;
}

}  // namespace

const std::string& cli::invocation() { return invocation_text(); }

void cli::ConfigArgs::add_to(CLI::App& command) {
  command.add_option("config", files, "Config files (YAML or JSON); later ones merge over earlier")
      ->required()
      ->check(CLI::ExistingFile);
  command.add_option("--set", overrides, "Override a config value: PATH=VALUE (repeatable)")
      ->type_name("PATH=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

int run_cli(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) invocation_text() += (i ? " " : "") + std::string(argv[i]);
  if (!registration_errors().empty()) return report("", registration_errors().front(), 3);
  CLI::App app("kiln: train, evaluate, export and serve deep-learning models from a config file.",
               "kiln");
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", fmt::format("kiln {} (LibTorch {})", KILN_VERSION, engine::libtorch_version()));
  app.fallthrough();  // options of the app, --plugin, may follow the subcommand too
  cli::Action action;
  cli::add_train_command(app, action);
  cli::add_eval_command(app, action);
  cli::add_list_command(app, action);
  cli::add_config_command(app, action);
  cli::add_data_command(app, action);
  cli::add_model_command(app, action);
  std::vector<std::string> plugins;
  app.add_option("--plugin", plugins,
                 "Shared library of your own components to load first (repeatable); its "
                 "registrations appear in `kiln list`")
      ->type_name("LIB.so")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;  // CLI11's own codes are not ours; any parse failure is usage (2)
  }
  // Components are looked up when the action runs, so loading after parsing is early enough.
  return run_action([&] {
    for (const std::string& plugin : plugins) load_plugin(plugin);
    return action();
  });
}

}  // namespace kiln
