#pragma once
// TensorFlow Serving's REST API over a ModelTable, without the sockets (http_server.h carries it):
// model status, model metadata, predict in row and columnar form, and for models that read raw
// features (feature columns) predict, classify and regress of examples. Every failure is a reply of
// {"error": MESSAGE} with the HTTP status TensorFlow Serving gives it; nothing a client sends
// makes handle() throw. A predict is answered when its servable has run it (on the batcher's
// thread), so the server's event loop hands requests on without waiting for them.
// Thread-safety: handle() and handle_async() may be called from several threads at once.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kiln/net/abandoned.h"
#include "kiln/serving/held_bytes.h"
#include "kiln/serving/metrics.h"
#include "kiln/serving/model_table.h"
#include "kiln/serving/request_gate.h"
#include "kiln/serving/rest/example_request.h"

namespace kiln::serving {

struct HttpReply {
  int status = 200;
  std::string body;
  // The servable that answered, released with the reply by whoever sends it: a version retired
  // while it ran must not be destroyed on its own batcher's thread, which its destructor joins.
  std::shared_ptr<const void> servable;
};

struct RestOptions {
  int64_t max_rows = 1024;          // examples in one predict request
  const HeldBytes* held = nullptr;  // the models' budget for requests' inputs, when there is one
};

/// Told the reply to a request, once, on whichever thread finished it.
using ReplyDone = std::function<void(HttpReply reply)>;

class RestHandler {
 public:
  /// Counts every request into `metrics` when given, and lets each in through `gate` (shared
  /// with the server's other APIs) when given, else through a gate of its own.
  RestHandler(const ModelTable& table, RestOptions options, ServingMetrics* metrics = nullptr,
              RequestGate* gate = nullptr)
      : table_(table), options_(options), metrics_(metrics), gate_(gate ? *gate : own_gate_) {}
  /// Waits until the requests in flight have been answered (the batchers run on).
  ~RestHandler() { gate_.wait_until_idle(); }

  /// The reply to `method` `path` with `body`, given to `done`: at once for everything but a
  /// predict, which is answered when its batch has run, or without running once `abandoned` is
  /// set (its client gone, net/abandoned.h).
  void handle_async(const std::string& method, const std::string& path, const std::string& body,
                    ReplyDone done, net::Abandoned abandoned = nullptr) const;
  /// The same, waited for.
  HttpReply handle(const std::string& method, const std::string& path,
                   const std::string& body) const;
  /// Whether `method` `path` reads examples through a model's feature columns: a classify or a
  /// regress, or a predict of a version that reads raw features. Such a body costs more a byte
  /// than tensors do (each row through each column). False for a path of no model served.
  bool reads_examples(const std::string& method, const std::string& path) const;
  /// Prometheus's text of the metrics ("" without them).
  std::string metrics_text() const;

  /// Draining for a shutdown: requests that arrive from now on are answered 503 while those in
  /// flight run on; returns once none is left, or after `timeout`, with how many were left.
  int64_t drain(std::chrono::milliseconds timeout) { return gate_.drain(timeout); }
  /// Requests being answered now (by every API sharing its gate).
  int64_t in_flight() const { return gate_.in_flight(); }

 private:
  // Where a request's reply goes, and whether anyone still waits for it there.
  struct Finish {
    std::function<void(const Route& route, HttpReply reply)> reply;
    net::Abandoned abandoned;
    void operator()(const Route& route, HttpReply answer) const { reply(route, std::move(answer)); }
  };
  // The body of a 200 made of a model's outputs.
  using Respond = std::function<std::string(const HostTensors& outputs)>;
  HttpReply answer_now(const Route& route) const;
  static const std::map<std::string, TensorSpec>& signature_inputs(const Signatures& signatures,
                                                                   const std::string& name);
  void check_rows(const std::string& input, int64_t rows) const;
  void start_predict(const Route& route, const std::string& body, const Finish& finish) const;
  // :classify and :regress; and a :predict of raw features, already read.
  void start_examples(const Route& route, const std::string& body, const Finish& finish) const;
  void start_examples(const Route& route, FoundVersion found, ExamplesRequest request,
                      const Finish& finish) const;
  // Runs `inputs` on the version found and finishes with `respond`'s body, or the error.
  void submit(const Route& route, FoundVersion found, const std::string& signature,
              HostTensors inputs, Respond respond, const Finish& finish) const;
  void finished(const Route& route, std::chrono::steady_clock::time_point start, HttpReply reply,
                const ReplyDone& done) const;

  const ModelTable& table_;
  RestOptions options_;
  ServingMetrics* metrics_;
  RequestGate own_gate_;  // when the server shares none
  RequestGate& gate_;
};

}  // namespace kiln::serving
