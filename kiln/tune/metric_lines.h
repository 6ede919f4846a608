#pragma once
// How a program a study runs (`tune.command`) reports its values: a line it prints,
//   kiln-metric NAME=VALUE [NAME=VALUE ...] [step=N]
// or a line of JSON it writes to the file kiln names in KILN_METRICS_FILE,
//   {"NAME": VALUE, ..., "step": N}
// Each value is a finite number; a report with a step is an intermediate value (what pruners
// judge a trial by), one without is the program's final word. Any other printed line is the
// program's own and is only logged.
// Torch-free. Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kiln/core/json.h"

namespace kiln::tune {

struct MetricReport {
  std::map<std::string, double> values;
  std::optional<int64_t> step;
};

/// The prefix that makes a printed line a report.
inline constexpr const char* kMetricPrefix = "kiln-metric";
/// The longest line read as a report; a longer one is a mistake, not a report.
inline constexpr size_t kMaxMetricLine = 64 * 1024;
/// The most values one report may give: a study ranks by one and keeps a few more. A metrics
/// file of 6,000 lines of 3,000 names each held a study at 1.4 GB.
inline constexpr size_t kMaxReportValues = 256;

/// The report a printed line makes; none for a line that does not start with kiln-metric
/// followed by a space or its end. Error saying what is wrong with a report line that is
/// malformed: no NAME=VALUE, a value that is no finite number, a step that is no whole number
/// from 0, a name given twice.
std::optional<MetricReport> parse_metric_line(const std::string& line);

/// The report a line of the metrics file makes (the line's JSON, parsed); Error as above for an
/// object that is not one, or holds no value.
MetricReport parse_metric_record(const Json& record);

}  // namespace kiln::tune
