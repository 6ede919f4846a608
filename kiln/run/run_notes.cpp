#include "kiln/run/run_notes.h"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "kiln/core/error.h"
#include "kiln/run/run_info.h"

namespace kiln::run {

void append_note(const std::string& run, const std::string& text) {
  std::error_code error;
  if (!std::filesystem::is_directory(run, error) ||
      (!std::filesystem::exists(run + "/run.json", error) &&
       !std::filesystem::exists(run + "/metrics.csv", error)))
    throw UsageError(fmt::format("{}: not a run folder (it has no run.json or metrics.csv)", run));
  std::string path = run + "/notes.md";
  bool had_text =
      std::filesystem::exists(path, error) && std::filesystem::file_size(path, error) > 0;
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (out) out << (had_text ? "\n" : "") << text << "\n";
  out.flush();
  if (!out) throw IoError("append to", path, errno);
}

}  // namespace kiln::run
