// A run folder as `kiln runs`, the board and the report read it back: run.json, summary.json,
// metrics.csv and config.yaml, any of them damaged or edited by hand. Reading never throws (each
// problem is listed with its run), and the table, CSV and JSON of the run are written for any
// bytes (JSON that parses again). The single-file readers resume, tune and the board use throw
// nothing but kiln's errors. The input is the four files in that order, separated by the
// byte 0x1e; a file with no bytes is left out.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/run/metrics_csv.h"
#include "kiln/run/run_info.h"
#include "kiln/run/run_table.h"

namespace {

// This process's run folder (libFuzzer's -fork workers each have their own).
const std::string& run_folder() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string folder = std::string(dir && *dir ? dir : "/tmp") + "/kiln_fuzz_run_" +
                         std::to_string(getpid()) + "/name/20261128-000000";
    std::filesystem::create_directories(folder);
    return folder;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const char* names[] = {"run.json", "summary.json", "metrics.csv", "config.yaml"};
  size_t start = 0;
  for (const char* name : names) {
    size_t end = std::min(bytes.find('\x1e', start), bytes.size());
    std::string path = run_folder() + "/" + name;
    std::filesystem::remove(path);
    if (end > start) std::ofstream(path, std::ios::binary) << bytes.substr(start, end - start);
    start = std::min(end + 1, bytes.size());
  }
  try {
    kiln::run::read_record(run_folder());
  } catch (const kiln::Error&) {
  }
  try {
    kiln::run::read_summary(run_folder());
  } catch (const kiln::Error&) {
  }
  kiln::run::read_metrics_since(run_folder(), 0);
  std::vector<kiln::run::RunInfo> runs = {kiln::run::read_run(run_folder())};
  kiln::run::runs_table(runs);
  kiln::run::runs_csv(runs);
  kiln::run::compare_table(runs);
  try {
    kiln::parse_json_text(kiln::run::runs_json(runs));
  } catch (const kiln::JsonTextError&) {
    std::abort();  // kiln wrote JSON that it cannot read back
  }
  return 0;
}
