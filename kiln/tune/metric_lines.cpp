#include "kiln/tune/metric_lines.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "kiln/core/error.h"

namespace kiln::tune {
namespace {

constexpr const char* kForm = "kiln-metric NAME=VALUE [NAME=VALUE ...] [step=N]";

// A step: a whole number from 0, as text or as JSON.
int64_t step_of(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long step = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != 0 || errno == ERANGE || step < 0)
    throw Error(fmt::format("step={} is no whole number from 0", text));
  return step;
}

double value_of(const std::string& name, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  // A decimal number only: strtod also reads hexadecimal (0x10 as 16), which no program means.
  bool decimal = text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (text.empty() || !decimal || *end != 0 || !std::isfinite(value))
    throw Error(fmt::format("{}={} is no finite number", name, text));
  return value;
}

void add_value(MetricReport& report, const std::string& name, double value) {
  if (report.values.size() == kMaxReportValues)
    throw Error(fmt::format("more than {} values in one report", kMaxReportValues));
  if (!report.values.emplace(name, value).second)
    throw Error(fmt::format("{} is given twice", name));
}

}  // namespace

std::optional<MetricReport> parse_metric_line(const std::string& line) {
  std::string prefix = kMetricPrefix;
  if (line.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  if (line.size() > prefix.size() && line[prefix.size()] != ' ' && line[prefix.size()] != '\t')
    return std::nullopt;  // kiln-metrics..., another word
  if (line.size() > kMaxMetricLine)
    throw Error(
        fmt::format("a kiln-metric line of {} bytes; at most {}", line.size(), kMaxMetricLine));
  std::istringstream words(line.substr(prefix.size()));
  MetricReport report;
  std::string word;
  while (words >> word) {
    size_t equals = word.find('=');
    if (equals == std::string::npos || equals == 0)
      throw Error(fmt::format("\"{}\" is not NAME=VALUE ({})", word, kForm));
    std::string name = word.substr(0, equals), text = word.substr(equals + 1);
    if (name == "step") {
      if (report.step) throw Error("step is given twice");
      report.step = step_of(text);
    } else {
      add_value(report, name, value_of(name, text));
    }
  }
  if (report.values.empty()) throw Error(fmt::format("no NAME=VALUE ({})", kForm));
  return report;
}

MetricReport parse_metric_record(const Json& record) {
  if (!record.is_object())
    throw Error("expected an object of values, e.g. {\"loss\": 0.25, \"step\": 3}, got " +
                show_value(record));
  if (record.size() > kMaxReportValues + 1)  // the values and a step
    throw Error(fmt::format("more than {} values in one report", kMaxReportValues));
  MetricReport report;
  for (const auto& [name, value] : record.items()) {
    if (name == "step") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0)
        throw Error("\"step\" is no whole number from 0: " + show_value(value));
      report.step = value.get<int64_t>();
      continue;
    }
    if (name.empty()) throw Error("a value without a name: " + show_value(value));
    if (!value.is_number() || !std::isfinite(value.get<double>()))
      throw Error(fmt::format("\"{}\" is no finite number: {}", name, show_value(value)));
    add_value(report, name, value.get<double>());
  }
  if (report.values.empty()) throw Error("the object holds no value besides \"step\"");
  return report;
}

}  // namespace kiln::tune
