// send_pending, the one place both loops send from: over a socket pair, what it sends, where it
// stops when the peer's buffer is full, and how a peer that has gone ends it (never SIGPIPE).

#include "kiln/net/loop_parts.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kiln::net {
namespace loop_parts_test {

using Clock = std::chrono::steady_clock;

struct SocketPair {
  int ours = -1, theirs = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ours = fds[0];
    theirs = fds[1];
    fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK);
  }
  ~SocketPair() {
    close(ours);
    if (theirs >= 0) close(theirs);
  }
};

TEST(SendPending, SendsWhatIsLeftAndSaysWhenItWent) {
  SocketPair pair;
  std::string out = "already sent|the rest";
  size_t sent = 13;
  Clock::time_point last{};
  EXPECT_EQ(send_pending(pair.ours, out, sent, last), SendEnd::kAllSent);
  EXPECT_EQ(sent, out.size());
  EXPECT_NE(last, Clock::time_point{});
  char got[64] = {};
  ASSERT_EQ(read(pair.theirs, got, sizeof got), 8);
  EXPECT_EQ(std::string(got, 8), "the rest");
}

TEST(SendPending, StopsWhereAFullSocketWouldBlockAndGoesOnLater) {
  SocketPair pair;
  std::string out(8 << 20, 'x');  // far more than a socket pair's buffers hold
  size_t sent = 0;
  Clock::time_point last{};
  EXPECT_EQ(send_pending(pair.ours, out, sent, last), SendEnd::kWouldBlock);
  EXPECT_GT(sent, 0u);
  EXPECT_LT(sent, out.size());
  std::string drained(sent, '\0');
  for (size_t got = 0; got < sent;) got += size_t(read(pair.theirs, &drained[got], sent - got));
  size_t before = sent;
  EXPECT_NE(send_pending(pair.ours, out, sent, last), SendEnd::kFailed);
  EXPECT_GT(sent, before);
}

TEST(SendPending, APeerThatHasGoneEndsItAsFailedWithoutASignal) {
  SocketPair pair;
  close(pair.theirs);
  pair.theirs = -1;
  std::string out = "to nobody";
  size_t sent = 0;
  Clock::time_point last{};
  EXPECT_EQ(send_pending(pair.ours, out, sent, last), SendEnd::kFailed);  // SIGPIPE would kill
  EXPECT_EQ(sent, 0u);
  EXPECT_EQ(last, Clock::time_point{});
}

TEST(SendPending, NothingLeftIsAllSentAtOnce) {
  SocketPair pair;
  std::string out = "done";
  size_t sent = out.size();
  Clock::time_point last{};
  EXPECT_EQ(send_pending(pair.ours, out, sent, last), SendEnd::kAllSent);
  EXPECT_EQ(last, Clock::time_point{});
}

}  // namespace loop_parts_test
}  // namespace kiln::net
