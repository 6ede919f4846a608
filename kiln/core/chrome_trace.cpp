#include "kiln/core/chrome_trace.h"

#include <algorithm>
#include <cmath>

namespace kiln {
namespace {

constexpr int kProcess = 1;

// Whole nanoseconds as fractional microseconds: viewers read doubles, and a shorter number keeps
// a long trace small.
double microseconds(double seconds) { return std::round(seconds * 1e9) / 1e3; }

Json metadata(const char* what, int thread, const std::string& name) {
  return {
      {"name", what}, {"ph", "M"}, {"pid", kProcess}, {"tid", thread}, {"args", {{"name", name}}}};
}

}  // namespace

void ChromeTrace::name_thread(int thread, const std::string& name) {
  threads_.emplace_back(thread, name);
}

Json ChromeTrace::to_json() const {
  double origin = 0;
  if (!spans_.empty())
    origin = std::min_element(spans_.begin(), spans_.end(), [](const auto& a, const auto& b) {
               return a.begin < b.begin;
             })->begin;
  Json events = Json::array();
  events.push_back(metadata("process_name", 0, process_name_));
  for (const auto& [thread, name] : threads_)
    events.push_back(metadata("thread_name", thread, name));
  for (const auto& span : spans_) {
    events.push_back({{"name", span.name},
                      {"cat", span.category},
                      {"ph", "X"},
                      {"ts", microseconds(span.begin - origin)},
                      {"dur", microseconds(std::max(0.0, span.end - span.begin))},
                      {"pid", kProcess},
                      {"tid", span.thread},
                      {"args", span.args}});
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace kiln
