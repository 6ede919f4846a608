// Dynamic batching without sleeps: a gate holds the model inside its first batch while the test
// queues more requests (it watches queued()), then lets them through as the next batch. Answers
// come to predict_async()'s callbacks on a batch thread; several batch threads run batches at once.

#include "kiln/serving/batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>

#include "kiln/serving/serving_error.h"
#include "tests/support/fake_servable.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// half_plus_two that blocks inside its first call until open() and records every batch's size.
class Gated : public testing::HalfPlusTwo {
 public:
  std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++entered_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return open_; });
      sizes.push_back(inputs.at("x").shape.front());
    }
    return HalfPlusTwo::predict(signature, inputs);
  }
  // Until `calls` batches are inside at once (or have been).
  void wait_until_entered(int calls = 1) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return entered_ >= calls; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  std::vector<int64_t> sizes;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int entered_ = 0;
  bool open_ = false;
};

BatchingOptions batching(int64_t max_batch, int64_t timeout_us, int64_t max_queued,
                         int threads = 1) {
  BatchingOptions options;
  options.max_batch = max_batch;
  options.timeout_us = timeout_us;
  options.max_queued = max_queued;
  options.threads = threads;
  return options;
}

std::map<std::string, HostTensor> rows(std::vector<double> values) {
  return {{"x", {DType::kFloat32, {static_cast<int64_t>(values.size()), 1}, values, {}}}};
}

class BatcherTest : public ::testing::Test {
 protected:
  void make(BatchingOptions options) {
    batcher_ = std::make_unique<BatchingServable>(gated_, options);
  }
  // Sends `values` from a thread of its own; the answer lands in `answers_[slot]`.
  void send(size_t slot, std::vector<double> values) {
    threads_.emplace_back([this, slot, values] {
      auto inputs = rows(values);
      answers_[slot] = batcher_->predict("serving_default", inputs).at("y").numbers;
    });
  }
  void wait_until_queued(int64_t count) {
    while (batcher_->queued() < count) std::this_thread::yield();
  }
  void finish() {
    gated_->open();
    for (auto& thread : threads_) thread.join();
  }

  std::shared_ptr<Gated> gated_ = std::make_shared<Gated>();
  std::unique_ptr<BatchingServable> batcher_;
  std::vector<std::thread> threads_;
  // One slot per request, each written by its own thread only.
  std::vector<std::vector<double>> answers_ = std::vector<std::vector<double>>(8);
};

TEST_F(BatcherTest, RequestsThatQueuedWhileABatchRanRunAsOneAndEachGetsItsRows) {
  make(batching(32, 0, 16));
  send(0, {0});
  gated_->wait_until_entered();
  send(1, {2, 4});
  send(2, {6});
  send(3, {8, 10, 12});
  wait_until_queued(3);
  finish();
  EXPECT_THAT(gated_->sizes, ElementsAre(1, 6));
  EXPECT_THAT(answers_[0], ElementsAre(2));
  EXPECT_THAT(answers_[1], ElementsAre(3, 4));
  EXPECT_THAT(answers_[2], ElementsAre(5));
  EXPECT_THAT(answers_[3], ElementsAre(6, 7, 8));
}

TEST_F(BatcherTest, ABatchHoldsAtMostMaxBatchExamples) {
  make(batching(3, 0, 16));
  send(0, {0});
  gated_->wait_until_entered();
  for (size_t i = 1; i <= 4; ++i) send(i, {double(i)});
  wait_until_queued(4);
  finish();
  EXPECT_THAT(gated_->sizes, ElementsAre(1, 3, 1));
}

TEST_F(BatcherTest, AFullQueueIsAnsweredUnavailableAtOnce) {
  make(batching(32, 0, 2));
  send(0, {0});
  gated_->wait_until_entered();
  send(1, {1});
  send(2, {2});
  wait_until_queued(2);
  auto inputs = rows({3});
  try {
    batcher_->predict("serving_default", inputs);
    ADD_FAILURE() << "queued a third";
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 503);
  }
  finish();
  for (size_t slot = 0; slot < 3; ++slot) EXPECT_EQ(answers_[slot].size(), 1u) << slot;
}

// The server's budget for requests' inputs, shared by every version: a request past it is
// answered 503 at once, naming the budget; the answered requests give their bytes back.
TEST_F(BatcherTest, ARequestPastTheServersBudgetIsAnsweredUnavailableAtOnce) {
  auto held = std::make_shared<HeldBytes>(3 * sizeof(double));  // three numbers
  BatchingOptions options = batching(32, 0, 16);
  options.held = held;
  make(options);
  send(0, {0});
  gated_->wait_until_entered();
  send(1, {1, 2});
  wait_until_queued(1);
  EXPECT_EQ(held->held(), 3 * sizeof(double));
  auto inputs = rows({3});
  try {
    batcher_->predict("serving_default", inputs);
    ADD_FAILURE() << "queued past the budget";
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 503);
    EXPECT_THAT(e.message(), HasSubstr("hold 24 bytes, and this one's 8 would pass its budget "
                                       "(--max-queued-bytes 24)"));
  }
  finish();
  batcher_.reset();  // its workers have ended: every request is gone
  EXPECT_EQ(held->held(), 0u);
  EXPECT_THAT(answers_[1], ElementsAre(2.5, 3));
}

TEST_F(BatcherTest, EachBatchThreadRunsABatchAtTheSameTime) {
  make(batching(32, 0, 16, 2));
  send(0, {0});
  gated_->wait_until_entered();
  send(1, {1});
  gated_->wait_until_entered(2);  // the second thread took it while the first was held
  finish();
  EXPECT_THAT(gated_->sizes, ElementsAre(1, 1));
  EXPECT_THAT(answers_[1], ElementsAre(2.5));
}

TEST_F(BatcherTest, AsyncAnswersComeOnTheBatchThreadAndAFullQueuesAtOnce) {
  make(batching(32, 0, 1));
  std::mutex mutex;
  std::condition_variable answered;
  std::thread::id answered_on;
  std::vector<double> answer;
  batcher_->predict_async(
      "serving_default", rows({4}),
      [&](HostTensors outputs, std::exception_ptr error) {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_FALSE(error);
        answer = outputs.at("y").numbers;
        answered_on = std::this_thread::get_id();
        answered.notify_all();
      },
      nullptr);
  gated_->wait_until_entered();
  batcher_->predict_async(
      "serving_default", rows({5}), [](HostTensors, std::exception_ptr) {}, nullptr);
  wait_until_queued(1);
  int refused_status = 0;
  batcher_->predict_async(
      "serving_default", rows({6}),
      [&](HostTensors, std::exception_ptr error) {
        try {
          std::rethrow_exception(error);
        } catch (const ServingError& e) {
          refused_status = e.http_status();
        }
      },
      nullptr);
  EXPECT_EQ(refused_status, 503);  // told before predict_async returned
  finish();
  std::unique_lock<std::mutex> lock(mutex);
  answered.wait(lock, [&] { return !answer.empty(); });
  EXPECT_THAT(answer, ElementsAre(4));
  EXPECT_NE(answered_on, std::this_thread::get_id());
}

// What a request was answered: its rows' outputs, or the HTTP status of its error; `count`
// goes up once it is (on whichever thread answered).
struct Answered {
  std::vector<double> outputs;
  int status = 0;
};
PredictDone keep_in(Answered& answered, std::atomic<int>& count) {
  return [&answered, &count](HostTensors outputs, std::exception_ptr error) {
    if (!error) {
      answered.outputs = outputs.at("y").numbers;
      answered.status = 200;
    } else {
      try {
        std::rethrow_exception(error);
      } catch (const ServingError& e) {
        answered.status = e.http_status();
      }
    }
    ++count;
  };
}
void wait_for(const std::atomic<int>& count, int answers) {
  while (count < answers) std::this_thread::yield();
}

// 5,000 calls reset by their clients kept the model busy for 21 s after they had gone: requests
// whose client goes while they wait are answered 499 (CANCELLED), never run, and let go of their
// bytes; the others of their batch run as before.
TEST_F(BatcherTest, RequestsWhoseClientWentWhileTheyWaitedAreNeverRun) {
  BatchingOptions options = batching(32, 0, 16);
  options.held = std::make_shared<HeldBytes>(1 << 20);
  make(options);
  send(0, {0});
  gated_->wait_until_entered();
  net::AbandonMark first_gone, last_gone, stays;
  Answered first, middle, last;
  std::atomic<int> answers{0};
  batcher_->predict_async("serving_default", rows({1, 2}), keep_in(first, answers),
                          first_gone.view());
  batcher_->predict_async("serving_default", rows({4}), keep_in(middle, answers), stays.view());
  batcher_->predict_async("serving_default", rows({6, 8, 10}), keep_in(last, answers),
                          last_gone.view());
  wait_until_queued(3);
  first_gone.set();
  last_gone.set();
  finish();
  wait_for(answers, 3);
  batcher_.reset();  // its worker stopped: the requests' bytes are given back
  EXPECT_THAT(gated_->sizes, ElementsAre(1, 1)) << "only the request still wanted ran";
  EXPECT_THAT(middle.outputs, ElementsAre(4));
  EXPECT_EQ(first.status, 499);
  EXPECT_EQ(last.status, 499);
  EXPECT_TRUE(first.outputs.empty());
  EXPECT_EQ(options.held->held(), 0u);
}

TEST_F(BatcherTest, WhenEveryWaitingRequestsClientWentNoBatchRuns) {
  make(batching(32, 0, 16));
  send(0, {0});
  gated_->wait_until_entered();
  net::AbandonMark gone;
  Answered answered;
  std::atomic<int> answers{0};
  batcher_->predict_async("serving_default", rows({1}), keep_in(answered, answers), gone.view());
  wait_until_queued(1);
  gone.set();
  finish();
  wait_for(answers, 1);
  batcher_.reset();
  EXPECT_THAT(gated_->sizes, ElementsAre(1));
  EXPECT_EQ(answered.status, 499);
}

TEST_F(BatcherTest, WithMaxBatch0EachRequestRunsAloneAndOneWhoseClientWentIsPassedOver) {
  make(batching(0, 0, 16));
  send(0, {0});
  gated_->wait_until_entered();
  net::AbandonMark gone;
  Answered dropped, first, second;
  std::atomic<int> answers{0};
  batcher_->predict_async("serving_default", rows({1}), keep_in(dropped, answers), gone.view());
  batcher_->predict_async("serving_default", rows({2}), keep_in(first, answers), nullptr);
  batcher_->predict_async("serving_default", rows({4, 6}), keep_in(second, answers), nullptr);
  wait_until_queued(3);
  gone.set();
  finish();
  wait_for(answers, 3);
  EXPECT_THAT(gated_->sizes, ElementsAre(1, 1, 2));
  EXPECT_EQ(dropped.status, 499);
  EXPECT_THAT(first.outputs, ElementsAre(3));
  EXPECT_THAT(second.outputs, ElementsAre(4, 5));
}

TEST(ServableByDefault, ARequestWhoseClientHasGoneIsAnsweredWithoutRunning) {
  testing::HalfPlusTwo model;
  net::AbandonMark gone;
  gone.set();
  Answered answered;
  std::atomic<int> answers{0};
  model.predict_async("serving_default", rows({1}), keep_in(answered, answers), gone.view());
  EXPECT_EQ(answered.status, 499);
  model.predict_async("serving_default", rows({2}), keep_in(answered, answers), nullptr);
  EXPECT_THAT(answered.outputs, ElementsAre(3));
}

TEST(Batching, ConcatenatesAndSlicesRowsOfNumbersAndStrings) {
  HostTensor a{DType::kString, {1, 2}, {}, {"a", "b"}},
      b{DType::kString, {2, 2}, {}, {"c", "d", "e", "f"}};
  std::map<std::string, HostTensor> first = {{"s", a}}, second = {{"s", b}};
  auto batch = concatenate({&first, &second});
  EXPECT_THAT(batch.at("s").shape, ElementsAre(3, 2));
  auto rows_1_2 = slice_rows(batch, 1, 2);
  EXPECT_THAT(rows_1_2.at("s").strings, ElementsAre("c", "d", "e", "f"));
  EXPECT_THAT(rows_1_2.at("s").shape, ElementsAre(2, 2));
}

}  // namespace
}  // namespace kiln::serving
