#include "kiln/serving/client/predict_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"

namespace kiln::serving {
namespace {

struct Target {
  std::string origin;  // scheme://host:port
  std::string path;    // .../v1/models/NAME...:predict
};

Target parse_url(const std::string& url) {
  size_t scheme = url.find("://");
  size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme == std::string::npos || path == std::string::npos)
    throw UsageError("--server takes http://HOST:PORT/v1/models/NAME, not " + url);
  Target target{url.substr(0, path), url.substr(path)};
  if (target.path.size() < 8 || target.path.compare(target.path.size() - 8, 8, ":predict") != 0)
    target.path += ":predict";
  return target;
}

// The instances of a JSON lines file. Bytes that cannot be JSON text (a NUL, or bytes that are
// not UTF-8: an image, a TFRecord file) are refused here rather than sent line by line.
std::vector<std::string> read_lines(const std::string& path) {
  std::string text = read_text_file(path);
  size_t bad = std::min(text.find('\0'), first_invalid_utf8(text));
  if (bad != std::string::npos)
    throw DataError(path, -1, static_cast<int64_t>(bad),
                    "is not JSON lines (it holds bytes no JSON text has); predict --server sends "
                    "one JSON instance a line, and an image as {\"b64\": \"...\"}");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  if (lines.empty()) throw DataError(path, -1, -1, "holds no instances");
  return lines;
}

// The answer's one prediction as a line, or its error.
std::string answer_line(const httplib::Result& result) {
  if (!result) return Json{{"error", httplib::to_string(result.error())}}.dump();
  try {
    Json body = parse_json_text(result->body);
    if (result->status == 200 && body.contains("predictions") && body["predictions"].size() == 1)
      return body["predictions"][0].dump();
    return Json{{"error", body.value("error", result->body)}, {"status", result->status}}.dump();
  } catch (const std::exception&) {  // not JSON, nested too deep, or not the expected shape
    return Json{{"error", result->body}, {"status", result->status}}.dump();
  }
}

}  // namespace

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

ClientReport run_client(const ClientOptions& options) {
  Target target = parse_url(options.url);
  return send_lines(options, [&]() -> InstanceSender {
    auto client = std::make_shared<httplib::Client>(target.origin);
    client->set_tcp_nodelay(true);
    if (!options.token.empty()) client->set_bearer_token_auth(options.token);
    return [client, &target, &options](const std::string& instance) {
      std::string body = fmt::format("{{\"signature_name\": {}, \"instances\": [{}]}}",
                                     Json(options.signature).dump(), instance);
      httplib::Result result = client->Post(target.path, body, "application/json");
      return ClientAnswer{result && result->status == 200, answer_line(result)};
    };
  });
}

ClientReport send_lines(const ClientOptions& options,
                        const std::function<InstanceSender()>& make_sender) {
  std::vector<std::string> lines = read_lines(options.input);
  std::vector<std::string> answers(lines.size());
  std::vector<double> latencies(lines.size());
  std::vector<char> ok(lines.size());
  std::atomic<size_t> next{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < std::max(1, options.concurrency); ++w)
    workers.emplace_back([&, send = make_sender()] {
      for (size_t i = next++; i < lines.size(); i = next++) {
        auto sent = std::chrono::steady_clock::now();
        ClientAnswer answer = send(lines[i]);
        latencies[i] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                .count();
        ok[i] = answer.ok;
        answers[i] = std::move(answer.line);
      }
    });
  for (auto& worker : workers) worker.join();
  ClientReport report;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.requests = static_cast<int64_t>(lines.size());
  report.failed = std::count(ok.begin(), ok.end(), 0);
  std::sort(latencies.begin(), latencies.end());
  report.p50_ms = percentile(latencies, 0.5);
  report.p90_ms = percentile(latencies, 0.9);
  report.p99_ms = percentile(latencies, 0.99);

  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output);
    if (!file) throw IoError("write", options.output, errno);
  }
  for (const std::string& answer : answers) {
    if (options.output.empty())
      std::fputs((answer + "\n").c_str(), stdout);
    else
      file << answer << "\n";
  }
  return report;
}

}  // namespace kiln::serving
