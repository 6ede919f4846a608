#pragma once
// What `kiln serve` tells Prometheus at /monitoring/prometheus/metrics, in its text exposition
// format: requests by model, API and HTTP status (errors are the non-2xx ones), a latency
// histogram per model and API, a histogram of the batch sizes run, and the versions loaded.
// Thread-safety: every member may be called from any thread.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::serving {

/// A Prometheus histogram: counts per upper bound (`le`), plus the sum and count of values.
struct Histogram {
  explicit Histogram(std::vector<double> bounds = {});
  void observe(double value);
  std::vector<double> bounds;
  std::vector<int64_t> counts;  // per bound, not cumulative; one more for +Inf
  double sum = 0;
  int64_t count = 0;
};

class ServingMetrics {
 public:
  /// One answered request: `api` is predict, status or metadata ("" when its URL matched none).
  void request(const std::string& model, const std::string& api, int status, double seconds);
  /// One batch run for `model`.
  void batch(const std::string& model, int64_t examples);
  /// The exposition text, with `versions` (model -> versions loaded) and the requests being
  /// answered as gauges.
  std::string text(const std::map<std::string, size_t>& versions, int64_t in_flight = 0) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, int64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> latency_;
  std::map<std::string, Histogram> batches_;
};

}  // namespace kiln::serving
