#include "kiln/serving/batcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>

#include "kiln/net/wake_signal.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

int64_t rows_of(const std::map<std::string, HostTensor>& inputs) {
  return inputs.empty() || inputs.begin()->second.shape.empty()
             ? 1
             : inputs.begin()->second.shape.front();
}

// Whether two requests' examples have the same shapes, so that they stack into one batch.
bool same_examples(const std::map<std::string, HostTensor>& a,
                   const std::map<std::string, HostTensor>& b) {
  if (a.size() != b.size()) return false;
  for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
    if (x->first != y->first || x->second.dtype != y->second.dtype ||
        x->second.shape.size() != y->second.shape.size() || x->second.shape.empty())
      return false;
    if (!std::equal(x->second.shape.begin() + 1, x->second.shape.end(),
                    y->second.shape.begin() + 1))
      return false;
  }
  return true;
}

}  // namespace

std::map<std::string, HostTensor> concatenate(
    const std::vector<const std::map<std::string, HostTensor>*>& parts) {
  std::map<std::string, HostTensor> batch = *parts.front();
  for (size_t i = 1; i < parts.size(); ++i)
    for (auto& [name, tensor] : batch) {
      const HostTensor& more = parts[i]->at(name);
      tensor.shape.front() += more.shape.front();
      tensor.numbers.insert(tensor.numbers.end(), more.numbers.begin(), more.numbers.end());
      tensor.strings.insert(tensor.strings.end(), more.strings.begin(), more.strings.end());
    }
  return batch;
}

std::map<std::string, HostTensor> slice_rows(const std::map<std::string, HostTensor>& outputs,
                                             int64_t begin, int64_t count) {
  std::map<std::string, HostTensor> sliced;
  for (const auto& [name, tensor] : outputs) {
    HostTensor part;
    part.dtype = tensor.dtype;
    part.shape = tensor.shape;
    part.shape.front() = count;
    int64_t total = tensor.shape.front();
    bool strings = !tensor.strings.empty();
    size_t size = strings ? tensor.strings.size() : tensor.numbers.size();
    size_t per_row = total > 0 ? size / static_cast<size_t>(total) : 0;
    size_t from = static_cast<size_t>(begin) * per_row, to = from + count * per_row;
    if (strings)
      part.strings.assign(tensor.strings.begin() + from, tensor.strings.begin() + to);
    else
      part.numbers.assign(tensor.numbers.begin() + from, tensor.numbers.begin() + to);
    sliced[name] = std::move(part);
  }
  return sliced;
}

BatchingServable::BatchingServable(std::shared_ptr<Servable> inner, BatchingOptions options,
                                   BatchObserver observer)
    : inner_(std::move(inner)), options_(options), observer_(std::move(observer)) {
  for (int i = 0; i < std::max(options_.threads, 1); ++i) workers_.emplace_back([this] { work(); });
}

BatchingServable::~BatchingServable() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

std::map<std::string, HostTensor> BatchingServable::predict(
    const std::string& signature, const std::map<std::string, HostTensor>& inputs) {
  std::promise<HostTensors> answer;
  std::future<HostTensors> answered = answer.get_future();
  predict_async(
      signature, inputs,
      [&answer](HostTensors outputs, std::exception_ptr error) {
        if (error)
          answer.set_exception(error);
        else
          answer.set_value(std::move(outputs));
      },
      nullptr);
  return answered.get();
}

void BatchingServable::predict_async(const std::string& signature, HostTensors inputs,
                                     PredictDone done, net::Abandoned abandoned) {
  auto request = std::make_shared<Request>();
  request->abandoned = std::move(abandoned);
  request->signature = signature;
  request->rows = rows_of(inputs);
  request->inputs = std::move(inputs);
  request->done = std::move(done);
  request->bytes = bytes_held_by(request->inputs);
  std::string refused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    refused = refusal(*request, queue_.size());
    if (refused.empty()) queue_.push_back(request);
  }
  if (refused.empty()) {
    arrived_.notify_one();
    return;
  }
  request->done({}, std::make_exception_ptr(ServingError(StatusCode::kUnavailable, refused)));
}

std::string BatchingServable::refusal(Request& request, size_t waiting) {
  if (stopping_) return "the server is shutting down";
  if (static_cast<int64_t>(waiting) >= options_.max_queued)
    return fmt::format(
        "the server is busy: {} requests are waiting for this model version; try again", waiting);
  if (options_.held && !options_.held->take(request.bytes))
    return fmt::format(
        "the server is busy: the requests waiting for its models hold {} bytes, and this "
        "one's {} would pass its budget (--max-queued-bytes {}); try again",
        options_.held->held(), request.bytes, options_.held->cap());
  request.held = options_.held;
  return "";
}

int64_t BatchingServable::queued() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

void BatchingServable::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    arrived_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    Batch batch = next_batch(lock);
    lock.unlock();
    for (const auto& request : batch.abandoned) request->done({}, client_gone_error());
    if (!batch.requests.empty()) run(batch.requests);
    batch = {};  // its requests give their bytes back (held_bytes.h) outside the lock
    lock.lock();
  }
  std::deque<std::shared_ptr<Request>> left;
  left.swap(queue_);
  lock.unlock();  // the callbacks may take locks of their own
  for (auto& request : left)
    request->done({}, std::make_exception_ptr(
                          ServingError(StatusCode::kUnavailable, "the server is shutting down")));
}

BatchingServable::Batch BatchingServable::next_batch(std::unique_lock<std::mutex>& lock) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(options_.timeout_us);
  Batch batch;
  int64_t rows = 0;
  while (true) {
    // Take every waiting request that fits (the first still wanted whatever its size, also with
    // --max-batch 0), setting aside those whose client has gone; then wait for more until the
    // deadline.
    for (auto it = queue_.begin();
         it != queue_.end() && (rows < options_.max_batch || batch.requests.empty());) {
      const std::shared_ptr<Request>& next = *it;
      bool gone = net::is_abandoned(next->abandoned);
      if (gone || batch.requests.empty() || joins(*next, *batch.requests.front(), rows)) {
        (gone ? batch.abandoned : batch.requests).push_back(next);
        if (!gone) rows += next->rows;
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (batch.requests.empty() || rows >= options_.max_batch || stopping_ ||
        arrived_.wait_until(lock, deadline) == std::cv_status::timeout)
      break;
  }
  // Those whose client went while the batch waited for company.
  auto gone = std::stable_partition(batch.requests.begin(), batch.requests.end(),
                                    [](const auto& r) { return !net::is_abandoned(r->abandoned); });
  batch.abandoned.insert(batch.abandoned.end(), gone, batch.requests.end());
  batch.requests.erase(gone, batch.requests.end());
  return batch;
}

bool BatchingServable::joins(const Request& next, const Request& first, int64_t rows) const {
  return next.signature == first.signature && rows + next.rows <= options_.max_batch &&
         same_examples(next.inputs, first.inputs);
}

void BatchingServable::run(const std::vector<std::shared_ptr<Request>>& batch) {
  net::DeferredWakes wakes;  // each event loop is woken once for the whole batch's answers
  std::vector<const std::map<std::string, HostTensor>*> parts;
  for (const auto& request : batch) parts.push_back(&request->inputs);
  HostTensors outputs;
  try {
    outputs = inner_->predict(batch.front()->signature, concatenate(parts));
  } catch (...) {
    for (const auto& request : batch) request->done({}, std::current_exception());
    return;
  }
  // Counted before anyone is answered, so that a client who reads the metrics after its answer
  // finds its batch there.
  if (observer_) {
    int64_t examples = 0;
    for (const auto& request : batch) examples += request->rows;
    observer_(examples);
  }
  int64_t begin = 0;
  for (const auto& request : batch) {
    request->done(slice_rows(outputs, begin, request->rows), nullptr);
    begin += request->rows;
  }
}

}  // namespace kiln::serving
