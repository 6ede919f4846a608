#pragma once
// The bytes that requests' inputs hold across the whole server, against one cap (`kiln serve
// --max-queued-bytes`): each request takes its share as it joins a model's queue and gives it
// back when it has been answered. The per-request limits (request_limits.h) bound one request;
// this bounds them all together: 5,000 small gRPC calls, each expanded to 3 MB, once took the
// server from 181 MB to 2 GB while every queue stayed within its length. When what is held falls
// to nothing after a good deal was given back, the freed memory goes back to the system, so
// that a server keeps no peak of a past load for good (core/peak_memory.h).
// Thread-safety: any thread.

#include <cstddef>
#include <mutex>

#include "kiln/serving/servable.h"

namespace kiln::serving {

class HeldBytes {
 public:
  explicit HeldBytes(size_t cap) : cap_(cap) {}

  /// Takes `bytes` when they fit under the cap (a request alone larger than the cap too, when
  /// nothing else is held: it was within the per-request limits); false otherwise.
  bool take(size_t bytes);
  /// Gives back what take() took.
  void give_back(size_t bytes);
  size_t held() const;
  size_t cap() const { return cap_; }
  /// Whether `bytes` more fit beside `held` (the rule take() applies).
  bool fits(size_t held, size_t bytes) const {
    return held == 0 || (bytes <= cap_ && held <= cap_ - bytes);
  }

  /// Given back since the freed memory last went to the system, past which it goes again once
  /// nothing is held.
  static constexpr size_t kReturnAfterBytes = 4 << 20;

 private:
  const size_t cap_;
  mutable std::mutex mutex_;
  size_t held_ = 0;
  size_t since_return_ = 0;
};

/// Refuses a request before it is read when the `bytes` it declares (1 when it declares none
/// before it is read) would not fit (UNAVAILABLE, as the queue would answer it): reading it would
/// be work for nothing, and a message of 230 bytes may be filled out to megabytes. Nothing for
/// none.
void refuse_without_room(const HeldBytes* held, size_t bytes = 1);

/// What a request's inputs hold in memory: their numbers and strings.
size_t bytes_held_by(const HostTensors& inputs);

}  // namespace kiln::serving
