#pragma once
// Dynamic batching (`kiln serve --max-batch N --batch-timeout-us T`): requests for one version
// wait in a bounded queue; a worker takes the first, adds the requests behind it that fit (same
// signature and example shape, up to N examples in all) until N are there or T microseconds have
// passed since the first arrived, runs them as one batch and hands each request its rows back.
// A request that finds the queue full, or the server's budget for requests' inputs spent
// (held_bytes.h), is answered 503 (kUnavailable) at once rather than waiting without bound; one
// whose client goes while it waits (net/abandoned.h) is answered kCancelled and never run. One
// worker per version also means a version runs one batch at a time. Thread-safety: predict() from
// any thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/serving/held_bytes.h"
#include "kiln/serving/servable.h"

namespace kiln::serving {

struct BatchingOptions {
  int64_t max_batch = 32;  // examples in one batch
  // How long the first request of a batch waits for company. 0: a batch is what queued while the
  // one before ran, so a lone client never waits and a busy server batches by itself.
  int64_t timeout_us = 0;
  int64_t max_queued = 256;  // requests waiting; one more is answered 503
  int threads = 1;           // batches run at once (TensorFlow Serving's num_batch_threads)
  // The server's budget for requests' inputs, shared by every version's queue (none: only the
  // queue's length bounds them); a request past it is answered 503 at once.
  std::shared_ptr<HeldBytes> held;
};

class BatchingServable : public Servable {
 public:
  /// Told the size of each batch run, for the metrics.
  using BatchObserver = std::function<void(int64_t examples)>;

  BatchingServable(std::shared_ptr<Servable> inner, BatchingOptions options,
                   BatchObserver observer = nullptr);
  /// Answers what is still queued with 503 and stops the worker.
  ~BatchingServable() override;

  const Signatures& signatures() const override { return inner_->signatures(); }
  const ExampleEncoder* examples() const override { return inner_->examples(); }
  const std::vector<std::string>& labels() const override { return inner_->labels(); }
  /// Waits for predict_async().
  std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) override;
  void predict_async(const std::string& signature, HostTensors inputs, PredictDone done,
                     net::Abandoned abandoned) override;
  /// Requests waiting for a batch now.
  int64_t queued();

 private:
  struct Request {
    std::string signature;
    HostTensors inputs;
    int64_t rows = 0;
    PredictDone done;
    net::Abandoned abandoned;
    size_t bytes = 0;  // its inputs', taken from `held` while it lives
    std::shared_ptr<HeldBytes> held;
    ~Request() {
      if (held) held->give_back(bytes);
    }
  };
  /// Why a request cannot join the queue now ("" when it can); takes its bytes when it can.
  std::string refusal(Request& request, size_t waiting);
  struct Batch {
    std::vector<std::shared_ptr<Request>> requests;   // to run together
    std::vector<std::shared_ptr<Request>> abandoned;  // taken off the queue, not to run
  };
  void work();
  Batch next_batch(std::unique_lock<std::mutex>& lock);
  /// Whether `next` may join a batch that `first` began and that holds `rows` examples.
  bool joins(const Request& next, const Request& first, int64_t rows) const;
  void run(const std::vector<std::shared_ptr<Request>>& batch);

  std::shared_ptr<Servable> inner_;
  BatchingOptions options_;
  BatchObserver observer_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::shared_ptr<Request>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// Inputs of several requests as one batch, examples of the first request first.
std::map<std::string, HostTensor> concatenate(
    const std::vector<const std::map<std::string, HostTensor>*>& parts);
/// Rows [begin, begin + count) of every output.
std::map<std::string, HostTensor> slice_rows(const std::map<std::string, HostTensor>& outputs,
                                             int64_t begin, int64_t count);

}  // namespace kiln::serving
