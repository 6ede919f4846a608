// When a gRPC connection has waited on its client too long, with a clock of the test's own: each
// of the three rules, and what keeps a connection (a call with the model, answers still being
// taken by a client that reads).

#include "kiln/net/grpc_idle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::net {
namespace grpc_idle_test {

using std::chrono::seconds;
using ::testing::HasSubstr;

const GrpcClock::time_point kStart{};  // what the test calls time 0
const GrpcTimeouts kTimeouts{seconds(10), seconds(30)};

GrpcConnectionTimes all_at(seconds at) {
  return {kStart + at, kStart + at, kStart + at, std::nullopt};
}

std::string why(const GrpcConnectionTimes& times, const GrpcConnectionLoad& load, seconds now) {
  return grpc_idle_reason(times, load, kStart + now, kTimeouts).value_or("kept");
}

TEST(GrpcIdle, ASilentClientGoesAtTheReadTimeout) {
  EXPECT_EQ(why(all_at(seconds(0)), {}, seconds(9)), "kept");
  EXPECT_THAT(why(all_at(seconds(0)), {}, seconds(10)), HasSubstr("10 s without a byte"));
}

TEST(GrpcIdle, AClientThatBeginsNoCallGoesHoweverItPings) {
  GrpcConnectionTimes pinging = all_at(seconds(0));
  pinging.last_activity = kStart + seconds(11);  // a ping just came
  EXPECT_THAT(why(pinging, {}, seconds(12)), HasSubstr("no call began"));
}

TEST(GrpcIdle, ARequestTricklingInGoesAtTheRequestTimeout) {
  GrpcConnectionTimes trickling = all_at(seconds(29));
  trickling.arriving_since = kStart;
  GrpcConnectionLoad arriving{0, 1, false};
  EXPECT_EQ(why(trickling, arriving, seconds(29)), "kept");
  EXPECT_THAT(why(trickling, arriving, seconds(30)), HasSubstr("request timeout (30 s"));
}

TEST(GrpcIdle, ACallWithTheModelKeepsItsConnection) {
  EXPECT_EQ(why(all_at(seconds(0)), {1, 0, false}, seconds(100)), "kept");
}

// 20 clients of 250 calls each lost every answer their sockets had not taken when their reading
// took longer than the read timeout: a client that takes what it is sent is not idle.
TEST(GrpcIdle, AnswersStillGoingToAClientThatReadsKeepItsConnection) {
  GrpcConnectionTimes reading = all_at(seconds(0));
  reading.last_taken = kStart + seconds(25);
  GrpcConnectionLoad answers_left{0, 0, true};
  EXPECT_EQ(why(reading, answers_left, seconds(30)), "kept");
  // One that stopped taking them goes as a silent one does.
  EXPECT_THAT(why(reading, answers_left, seconds(35)), HasSubstr("read timeout"));
  // Nothing left to send: the client has its answers, and the timeouts count again.
  EXPECT_THAT(why(reading, {0, 0, false}, seconds(30)), HasSubstr("read timeout"));
}

}  // namespace grpc_idle_test
}  // namespace kiln::net
