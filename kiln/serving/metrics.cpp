#include "kiln/serving/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::serving {
namespace {

const std::vector<double> kLatencyBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                            0.05,   0.1,   0.25,   0.5,   1,    2.5};
const std::vector<double> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

// A label value with Prometheus's escapes (backslash, quote, newline).
std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void write_histogram(std::string& out, const std::string& name, const std::string& labels,
                     const Histogram& histogram) {
  int64_t cumulative = 0;
  for (size_t i = 0; i < histogram.bounds.size(); ++i) {
    cumulative += histogram.counts[i];
    out +=
        fmt::format("{}_bucket{{{}le=\"{}\"}} {}\n", name, labels, histogram.bounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}le=\"+Inf\"}} {}\n", name, labels, histogram.count);
  std::string plain = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, plain, histogram.sum, name, plain,
                     histogram.count);
}

}  // namespace

Histogram::Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size() + 1) {}

void Histogram::observe(double value) {
  size_t slot = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  counts[slot] += 1;
  sum += value;
  count += 1;
}

void ServingMetrics::request(const std::string& model, const std::string& api, int status,
                             double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  requests_[{model, api, status}] += 1;
  auto [slot, fresh] = latency_.try_emplace({model, api}, kLatencyBounds);
  slot->second.observe(seconds);
}

void ServingMetrics::batch(const std::string& model, int64_t examples) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [slot, fresh] = batches_.try_emplace(model, kBatchBounds);
  slot->second.observe(static_cast<double>(examples));
}

std::string ServingMetrics::text(const std::map<std::string, size_t>& versions,
                                 int64_t in_flight) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP kiln_serving_requests_total Requests answered, by model, API and HTTP status.\n";
  out += "# TYPE kiln_serving_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [model, api, status] = key;
    out += fmt::format("kiln_serving_requests_total{{model=\"{}\",api=\"{}\",code=\"{}\"}} {}\n",
                       escaped(model), escaped(api), status, count);
  }
  out += "# HELP kiln_serving_request_seconds Time from a request's body to its answer.\n";
  out += "# TYPE kiln_serving_request_seconds histogram\n";
  for (const auto& [key, histogram] : latency_)
    write_histogram(
        out, "kiln_serving_request_seconds",
        fmt::format("model=\"{}\",api=\"{}\",", escaped(key.first), escaped(key.second)),
        histogram);
  out += "# HELP kiln_serving_batch_examples Examples in each batch the model ran.\n";
  out += "# TYPE kiln_serving_batch_examples histogram\n";
  for (const auto& [model, histogram] : batches_)
    write_histogram(out, "kiln_serving_batch_examples",
                    fmt::format("model=\"{}\",", escaped(model)), histogram);
  out += "# HELP kiln_serving_versions Versions of each model loaded and served.\n";
  out += "# TYPE kiln_serving_versions gauge\n";
  for (const auto& [model, count] : versions)
    out += fmt::format("kiln_serving_versions{{model=\"{}\"}} {}\n", escaped(model), count);
  out += "# HELP kiln_serving_requests_in_flight Requests being answered.\n";
  out += "# TYPE kiln_serving_requests_in_flight gauge\n";
  out += fmt::format("kiln_serving_requests_in_flight {}\n", in_flight);
  return out;
}

}  // namespace kiln::serving
