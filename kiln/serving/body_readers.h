#pragma once
// Threads that read the big requests off the event loop. The loop (http_event_loop.h) runs on one
// thread, so a request whose body takes long to read holds every other client while it is read:
// a JSON body of a million keys takes about a second, and sixteen of them held /healthz for 15 s.
// Bodies from kMinBytesOffLoop up are read here instead (small ones stay on the loop, which
// answers a batch's worth of them in one wake-up); the loop goes on meanwhile. The bytes of
// the bodies waiting for a reader are capped: past the cap a request is refused, not queued.
// Thread-safety: every member may be called from any thread.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::serving {

class BodyReaders {
 public:
  /// A body this big or bigger is read off the loop (a 64 KiB JSON body reads in about 0.5 ms).
  static constexpr size_t kMinBytesOffLoop = 64 << 10;

  /// `threads` readers (at least one); at most `max_waiting_bytes` of bodies wait for them.
  BodyReaders(int threads, size_t max_waiting_bytes);
  /// Reads what is waiting, then ends the threads.
  ~BodyReaders();
  BodyReaders(const BodyReaders&) = delete;
  BodyReaders& operator=(const BodyReaders&) = delete;

  /// Runs `read` on a reader, counting `bytes` while it waits; false (and `read` is not run)
  /// when that would pass the cap.
  bool post(size_t bytes, std::function<void()> read);
  /// Bytes of the bodies waiting now.
  size_t waiting_bytes() const;

 private:
  struct Waiting {
    size_t bytes = 0;
    std::function<void()> read;
  };
  void run();

  const size_t max_waiting_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Waiting> waiting_;
  size_t waiting_bytes_ = 0;
  bool ending_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kiln::serving
