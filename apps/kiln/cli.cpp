#include "apps/kiln/cli.h"

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>

#include "apps/kiln/allocator.h"
#include "kiln/core/error.h"
#include "kiln/core/parent_death.h"
#include "kiln/core/plugin.h"
#include "kiln/core/registry.h"
#include "kiln/experiment/run_environment.h"

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

std::string cli::this_program() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw Error("cannot tell which kiln binary runs (/proc/self/exe)");
  return std::string(path, size_t(n));
}

void cli::ConfigArgs::add_to(CLI::App& command, bool files_required, bool runs_too) {
  std::string what = "Config files (YAML or JSON); later ones merge over earlier";
  command
      .add_option("config", files, runs_too ? what + "; or a run or checkpoint directory" : what)
      ->required(files_required)
      ->check(runs_too ? CLI::Validator(CLI::ExistingPath) : CLI::Validator(CLI::ExistingFile));
  command.add_option("--set", overrides, "Override a config value: PATH=VALUE (repeatable)")
      ->type_name("PATH=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

namespace {

// Takes every `--plugin LIB` / `--plugin=LIB` out of the arguments, wherever it stands: CLI11
// cannot hand positionals back to a subcommand once a parent's option came between them.
// Returns false when a --plugin has no library after it.
bool take_plugins(std::vector<std::string>& args, std::vector<std::string>& plugins) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--plugin") {
      if (i + 1 == args.size()) return false;
      plugins.push_back(args[++i]);
    } else if (args[i].rfind("--plugin=", 0) == 0) {
      plugins.push_back(args[i].substr(9));
    } else {
      kept.push_back(args[i]);
    }
  }
  args = std::move(kept);
  return true;
}

}  // namespace

int run_cli(int argc, char** argv) {
  // Before any thread: a trial or worker whose study or launcher dies stops too.
  stop_with_parent();
  cli::keep_freed_memory_for_reuse();
  for (int i = 0; i < argc; ++i) invocation_text() += (i ? " " : "") + std::string(argv[i]);
  if (!registration_errors().empty()) return report("", registration_errors().front(), 3);
  std::vector<std::string> args(argv + 1, argv + argc), plugins;
  if (!take_plugins(args, plugins))
    return report("usage error: ", "--plugin needs a shared library: --plugin LIB.so", 2);
  CLI::App app("kiln: train, evaluate, export and serve deep-learning models from a config file.",
               "kiln");
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("kiln {} (LibTorch {})", KILN_VERSION,
                                                experiment::libtorch_version()));
  cli::Action action;
  cli::add_train_command(app, action);
  cli::add_launch_command(app, action);
  cli::add_tune_command(app, action);
  cli::add_eval_command(app, action);
  cli::add_export_command(app, action);
  cli::add_serve_command(app, action);
  cli::add_predict_command(app, action);
  cli::add_list_command(app, action);
  cli::add_config_command(app, action);
  cli::add_data_command(app, action);
  cli::add_model_command(app, action);
  cli::add_runs_command(app, action);
  cli::add_board_command(app, action);
  cli::add_report_command(app, action);
  cli::add_bench_command(app, action);
  // Declared for --help only: take_plugins() has already removed every occurrence.
  std::string help_only;
  app.add_option("--plugin", help_only,
                 "Shared library of your own components to load first (repeatable, anywhere on "
                 "the line); its registrations appear in `kiln list`")
      ->type_name("LIB.so");
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
    app.parse(args);
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
