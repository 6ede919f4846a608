#pragma once
// `kiln predict --server URL`: a TensorFlow Serving REST client. It sends each line of a JSON
// lines file (one instance) as a row-form :predict request, N at a time, writes each answer's
// prediction (or its error) as a line in the input's order, and reports throughput and latency
// percentiles. It speaks the API, so it drives TensorFlow Serving as well as `kiln serve`.
// Thread-safety: one run per call.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::serving {

struct ClientOptions {
  std::string url;     // http://HOST:PORT/v1/models/NAME[/versions/N] (":predict" is added)
  std::string input;   // JSON lines, one instance each
  std::string output;  // "" = standard output
  int concurrency = 1;
  std::string signature = "serving_default";
  std::string token;  // sent as Authorization: Bearer when not empty
};

struct ClientReport {
  int64_t requests = 0, failed = 0;
  double seconds = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
};

ClientReport run_client(const ClientOptions& options);

/// One request's answer: the line written for it (a prediction, or its error) and whether it
/// succeeded.
struct ClientAnswer {
  bool ok = false;
  std::string line;
};
/// Sends one instance (a line of the input) and gives its answer; one per client thread.
using InstanceSender = std::function<ClientAnswer(const std::string& instance)>;
/// What run_client does over any protocol: the input's lines sent `concurrency` at a time, each
/// thread through a sender `make_sender` makes for it, the answers written in the input's order,
/// and the report.
ClientReport send_lines(const ClientOptions& options,
                        const std::function<InstanceSender()>& make_sender);

/// The latency at quantile `q` (0..1) of `sorted` milliseconds: the nearest rank.
double percentile(const std::vector<double>& sorted, double q);

}  // namespace kiln::serving
