#include "kiln/core/error.h"

#include <cstring>
#include <utility>

namespace kiln {
namespace {

std::string config_message(const std::string& path, const std::string& origin,
                           const std::string& problem) {
  std::string where = path.empty() ? "config error" : "config error at " + path;
  if (!origin.empty()) where += " (" + origin + ")";
  return where + ": " + problem;
}

std::string data_message(const std::string& file, int64_t record, int64_t offset,
                         const std::string& problem) {
  std::string where = "data error in " + file;
  if (record >= 0) where += fmt::format(", record {}", record);
  if (offset >= 0) where += fmt::format(", byte offset {}", offset);
  return where + ": " + problem;
}

}  // namespace

ConfigError::ConfigError(std::string path, std::string origin, std::string problem)
    : Error(config_message(path, origin, problem)),
      path_(std::move(path)),
      origin_(std::move(origin)),
      problem_(std::move(problem)) {}

DataError::DataError(std::string file, int64_t record, int64_t offset, const std::string& problem)
    : Error(data_message(file, record, offset, problem)),
      file_(std::move(file)),
      record_(record),
      offset_(offset) {}

IoError::IoError(const std::string& action, std::string path, int error_number)
    : Error(fmt::format("cannot {} {}: {}", action, path, std::strerror(error_number))),
      path_(std::move(path)),
      error_number_(error_number) {}

namespace {

bool is_under(const std::string& path, const std::string& base) {
  if (path.compare(0, base.size(), base) != 0) return false;
  return path.size() == base.size() || path[base.size()] == '.' || path[base.size()] == '[';
}

}  // namespace

void rethrow_at_config_path(const std::string& path, const std::string& kind) {
  if (path.empty()) throw;
  try {
    throw;
  } catch (const ConfigError& e) {
    if (is_under(e.path(), path)) throw;
    std::string inner = e.path().empty() ? path : path + "." + e.path();
    throw ConfigError(inner, e.origin(), e.problem());
  } catch (const InternalError&) {
    throw;
  } catch (Error& e) {
    // Its kind (and so the exit code: bad data is not a config error) stays.
    e.add_context("the " + kind + " at " + path);
    throw;
  }
}

}  // namespace kiln
