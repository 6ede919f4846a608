#pragma once
// Threads for the work an event loop must not do itself. A loop (http_event_loop.h) runs on one
// thread, so a request that takes long to answer holds every other client meanwhile: a JSON
// body of a million keys takes about a second to read, and sixteen of them held `kiln serve`'s
// /healthz for 15 s; eight slow readers of `kiln board` once held all of its threads. Such work
// is posted here with a cost (a body's bytes; one per request), and the loop goes on. What
// waits is capped by its cost: past the cap, work is refused rather than queued.
// Thread-safety: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::serving {

class OffLoopWorkers {
 public:
  /// A REST body this big or bigger is read off `kiln serve`'s loop (a 64 KiB JSON body reads
  /// in about 0.5 ms: smaller ones stay on the loop, which answers a batch's worth in one
  /// wake-up).
  static constexpr size_t kMinBodyBytesOffLoop = 64 << 10;
  /// Examples read through a model's feature columns cost more a byte (each row through each
  /// column): a request of examples this big or bigger (about fifty) is read off the loop.
  /// 3,000 gRPC calls of 1,000 penguins, 32 KB each, held it 5.7 s.
  static constexpr size_t kMinExamplesBytesOffLoop = 4 << 10;

  /// After work of this cost or more (a body of 4 MiB), the memory freed is given back to the
  /// system, at most once a second: a JSON body of a million keys left `kiln serve` at its
  /// peak for good.
  static constexpr size_t kGiveBackAfterCost = 4 << 20;

  /// `threads` workers (at least one); work of at most `max_waiting_cost` in all waits for them.
  OffLoopWorkers(int threads, size_t max_waiting_cost);
  /// Runs what is waiting, then ends the threads.
  ~OffLoopWorkers();
  OffLoopWorkers(const OffLoopWorkers&) = delete;
  OffLoopWorkers& operator=(const OffLoopWorkers&) = delete;

  /// Runs `work` on a worker, counting `cost` until it has run; false (and `work` is not run)
  /// when that would pass the cap.
  bool post(size_t cost, std::function<void()> work);
  /// The cost of the work waiting or running now.
  size_t waiting_cost() const;
  /// Forgets the work not yet begun (its clients' loop has stopped, so no answer could reach
  /// them); what runs goes on. A board stopped by SIGTERM behind 12 slow requests a client
  /// kept asking for took 43 s to end.
  void drop_waiting();

 private:
  struct Waiting {
    size_t cost = 0;
    std::function<void()> work;
  };
  void run();

  const size_t max_waiting_cost_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Waiting> waiting_;
  size_t waiting_cost_ = 0;
  bool ending_ = false;
  std::chrono::steady_clock::time_point last_give_back_{};
  std::vector<std::thread> threads_;
};

}  // namespace kiln::serving
