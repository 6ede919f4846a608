#pragma once
// The error hierarchy of kiln. Every failure a user can cause is a kiln::Error subclass that names
// where it happened (config path and file, data file and byte offset, filesystem path), so the
// message alone is enough to fix the input. Bugs are InternalError. The library never exits or
// aborts; only apps/kiln/cli.cpp (run_action) maps these types to exit codes (docs/design.md §5,
// §8). Thread-safety: the classes are immutable values.

#include <cstdint>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace kiln {

/// Base of every error kiln reports to a user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message), message_(message) {}
  const char* what() const noexcept override { return message_.c_str(); }
  /// Adds where, in the caller's terms, the error happened (`the dataset at data.train`), as it
  /// unwinds through a boundary that knows more than the place that threw.
  void add_context(const std::string& where) { message_ += " (" + where + ")"; }

 private:
  std::string message_;
};

/// A config value is missing, mistyped or out of range. `path` is dotted (`train.max`,
/// `model.layers[2].out`), `origin` the file (or `--set`) the value came from.
class ConfigError : public Error {
 public:
  ConfigError(std::string path, std::string origin, std::string problem);
  const std::string& path() const { return path_; }
  const std::string& origin() const { return origin_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_, origin_, problem_;
};

/// Input data is malformed. `record` and `offset` are -1 when unknown.
class DataError : public Error {
 public:
  DataError(std::string file, int64_t record, int64_t offset, const std::string& problem);
  const std::string& file() const { return file_; }
  int64_t record() const { return record_; }
  int64_t offset() const { return offset_; }

 private:
  std::string file_;
  int64_t record_, offset_;
};

/// A filesystem operation failed; `error_number` is the errno it failed with.
class IoError : public Error {
 public:
  IoError(const std::string& action, std::string path, int error_number);
  const std::string& path() const { return path_; }
  int error_number() const { return error_number_; }

 private:
  std::string path_;
  int error_number_;
};

/// The command line is malformed (exit code 2, like a config error).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A broken invariant inside kiln: a bug, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// Rethrows the error being handled, thrown while building the component configured at `path`
/// (`data.train`, `metrics[1]`), so that it names that path: a ConfigError relative to the
/// component (`k`, or none) moves under it; any other kiln::Error keeps its kind and says which
/// component it came from (`(the dataset at data.train)`); bugs (InternalError) and errors that
/// are not kiln's pass unchanged. Call it in a catch block.
[[noreturn]] void rethrow_at_config_path(const std::string& path, const std::string& kind);

}  // namespace kiln

/// Checks user-controlled input; throws kiln::Error with the formatted message.
#define KILN_CHECK(condition, ...)                                   \
  do {                                                               \
    if (!(condition)) throw ::kiln::Error(fmt::format(__VA_ARGS__)); \
  } while (false)

/// Checks an invariant of kiln's own code; throws kiln::InternalError naming the place.
#define KILN_ASSERT(condition)                                                                \
  do {                                                                                        \
    if (!(condition))                                                                         \
      throw ::kiln::InternalError(                                                            \
          fmt::format("internal error: {} failed at {}:{}", #condition, __FILE__, __LINE__)); \
  } while (false)
