#pragma once
// Spans written in the Chrome trace event format (the JSON that chrome://tracing, Perfetto's UI
// and speedscope open): complete events ("ph": "X") with times in microseconds, one process,
// threads named by metadata events. A span inside another on the same thread draws nested
// under it. Thread-safety: values.

#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln {

struct TraceSpan {
  std::string name;            // what ran: "forward", "conv1"
  std::string category;        // a filter in the viewers: "step", "layer forward"
  double begin = 0, end = 0;   // seconds on one clock; the trace starts at the earliest begin
  int thread = 0;              // a row of the trace; named by name_thread
  Json args = Json::object();  // shown when the span is selected
};

class ChromeTrace {
 public:
  explicit ChromeTrace(std::string process_name) : process_name_(std::move(process_name)) {}
  void name_thread(int thread, const std::string& name);
  void add(TraceSpan span) { spans_.push_back(std::move(span)); }
  const std::vector<TraceSpan>& spans() const { return spans_; }
  /// {"traceEvents": [...], "displayTimeUnit": "ms"}, spans in the order added.
  Json to_json() const;

 private:
  std::string process_name_;
  std::vector<std::pair<int, std::string>> threads_;
  std::vector<TraceSpan> spans_;
};

}  // namespace kiln
