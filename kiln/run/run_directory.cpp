#include "kiln/run/run_directory.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_file.h"

namespace kiln::run {
namespace fs = std::filesystem;

RunDirectory RunDirectory::create(const std::string& root, const std::string& name,
                                  std::time_t now) {
  char stamp[32];
  std::tm local{};
  localtime_r(&now, &local);
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  std::string parent = root + "/" + name;
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) throw IoError("create", parent, error.value());
  // mkdir fails on an existing name, so two runs started in the same second get -1, -2, ...
  for (int n = 0; n < 1000; ++n) {
    std::string path = parent + "/" + stamp + (n == 0 ? "" : "-" + std::to_string(n));
    if (::mkdir(path.c_str(), 0755) == 0) {
      fs::create_directories(path + "/" + kCheckpointsFolder);
      return RunDirectory(path);
    }
    if (errno != EEXIST) throw IoError("create", path, errno);
  }
  throw IoError("create a unique run directory in", parent, EEXIST);
}

namespace {

// `runs/x/` as `runs/x`, so that every process names the folder alike.
std::string without_trailing_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

RunDirectory RunDirectory::named(const std::string& path) {
  return RunDirectory(without_trailing_slash(path));
}

RunDirectory RunDirectory::create_at(const std::string& path) {
  std::string trimmed = without_trailing_slash(path);
  if (fs::exists(trimmed + "/" + kConfigFile))
    throw UsageError(trimmed +
                     " already holds a run (it has config.yaml); continue it with --resume " +
                     trimmed + ", or give another --run-dir");
  std::string checkpoints = trimmed + "/" + kCheckpointsFolder;
  std::error_code error;
  fs::create_directories(checkpoints, error);
  if (error) throw IoError("create", checkpoints, error.value());
  return RunDirectory(trimmed);
}

RunDirectory RunDirectory::open(const std::string& path) {
  std::string trimmed = without_trailing_slash(path);
  if (!fs::exists(trimmed + "/" + kConfigFile))
    throw UsageError(trimmed + " is not a run directory: it has no config.yaml");
  return RunDirectory(trimmed);
}

RunLock::RunLock(const RunDirectory& run)
    : lock_(run.path(), "run " + run.path() + " is being trained") {}

void RunDirectory::write_json(const std::string& name, const Json& value) const {
  // An error message in run.json may quote bytes that are not UTF-8 (a name in a file): they are
  // shown replaced rather than stopping the run's record (docs/reliability.md).
  write_file_atomic(file(name), dump_json(value, 2) + "\n");
}

std::string iso_time(std::time_t t) {
  char text[32];
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace kiln::run
