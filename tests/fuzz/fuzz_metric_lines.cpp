// What the program of a study's trial (tune.command) writes, as kiln tune reads it back: its
// output split into lines and each read as a kiln-metric report or passed over, and its metrics
// file's lines read as JSON reports. Any bytes give reports or a kiln::Error; a report holds at
// least one value, every value finite, and a step from 0.

#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/tune/trial_output.h"

namespace {

void check(const kiln::tune::MetricReport& report) {
  if (report.values.empty() || (report.step && *report.step < 0)) __builtin_trap();
  for (const auto& [name, value] : report.values)
    if (name.empty() || !std::isfinite(value)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  kiln::tune::LineSplitter output, metrics;
  // Split where the fuzzer says, as a pipe delivers what it holds.
  size_t cut = size ? data[0] % (size + 1) : 0;
  auto lines = output.add(bytes, cut);
  for (auto& more : output.add(bytes + cut, size - cut)) lines.push_back(std::move(more));
  for (auto& more : output.end()) lines.push_back(std::move(more));
  for (const auto& [number, line] : lines) {
    if (number < 1 || line.size() > kiln::tune::kMaxMetricLine + 1) __builtin_trap();
    try {
      if (auto report = kiln::tune::parse_metric_line(line)) check(*report);
    } catch (const kiln::Error&) {
    }
    try {
      check(kiln::tune::parse_metric_record(kiln::parse_json_text(line)));
    } catch (const kiln::JsonTextError&) {
    } catch (const kiln::Error&) {
    }
  }
  return 0;
}
