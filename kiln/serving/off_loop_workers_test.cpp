// Work beside an event loop (off_loop_workers.h): what is posted is run off the caller's
// thread, in order on one worker; the cost waiting is capped, a post past the cap refused and
// not run; what waits at the end is still run.

#include "kiln/serving/off_loop_workers.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::serving {
namespace off_loop_workers_test {  // not anonymous: a unity batch shares its unit

// A gate a reader waits at until the test opens it.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    opened.wait(lock, [this] { return open; });
  }
  void let_through() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    opened.notify_all();
  }
};

TEST(OffLoopWorkers, ThePostsPastTheCapAreRefusedAndTheOthersRunInOrderOffTheCaller) {
  Gate gate;
  std::vector<int> ran;
  std::thread::id reader;
  {
    OffLoopWorkers readers(1, 100);
    ASSERT_TRUE(readers.post(60, [&] {
      gate.wait();
      reader = std::this_thread::get_id();
      ran.push_back(1);
    }));
    EXPECT_TRUE(readers.post(40, [&] { ran.push_back(2); }));
    EXPECT_EQ(readers.waiting_cost(), 100u);
    EXPECT_FALSE(readers.post(1, [&] { ran.push_back(3); })) << "past the cap";
    gate.let_through();
  }  // the readers end once what waits has run
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  EXPECT_NE(reader, std::this_thread::get_id());
}

TEST(OffLoopWorkers, ABodyBiggerThanTheCapIsRefused) {
  OffLoopWorkers readers(2, 100);
  EXPECT_FALSE(readers.post(101, [] {}));
  EXPECT_EQ(readers.waiting_cost(), 0u);
}

}  // namespace off_loop_workers_test
}  // namespace kiln::serving
