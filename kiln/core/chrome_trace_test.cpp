#include "kiln/core/chrome_trace.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(ChromeTrace, WritesCompleteEventsInMicrosecondsFromTheFirstBegin) {
  ChromeTrace trace("kiln train");
  trace.name_thread(1, "training");
  trace.add({"step", "step", 10.5, 10.75, 1, {{"step", 3}}});
  trace.add({"conv1", "layer forward", 10.5000015, 10.5010015, 1});
  Json json = trace.to_json();
  EXPECT_EQ(json["displayTimeUnit"], "ms");
  const Json& events = json["traceEvents"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["name"], "process_name");
  EXPECT_EQ(events[0]["args"]["name"], "kiln train");
  EXPECT_EQ(events[1]["name"], "thread_name");
  EXPECT_EQ(events[1]["tid"], 1);
  EXPECT_EQ(events[1]["args"]["name"], "training");

  EXPECT_EQ(events[2]["name"], "step");
  EXPECT_EQ(events[2]["ph"], "X");
  EXPECT_DOUBLE_EQ(events[2]["ts"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(events[2]["dur"].get<double>(), 250000);
  EXPECT_EQ(events[2]["args"]["step"], 3);
  EXPECT_EQ(events[3]["cat"], "layer forward");
  EXPECT_NEAR(events[3]["ts"].get<double>(), 1.5, 1e-3);
  EXPECT_NEAR(events[3]["dur"].get<double>(), 1000, 1e-3);
  EXPECT_EQ(events[3]["pid"], events[2]["pid"]);
}

TEST(ChromeTrace, ASpanThatEndsBeforeItBeginsLastsNoTime) {
  ChromeTrace trace("kiln");
  trace.add({"odd", "step", 2, 1, 1});
  EXPECT_EQ(trace.to_json()["traceEvents"][1]["dur"], 0.0);
}

TEST(ChromeTrace, AnEmptyTraceIsStillATrace) {
  Json json = ChromeTrace("kiln").to_json();
  ASSERT_EQ(json["traceEvents"].size(), 1u);
  EXPECT_EQ(json["traceEvents"][0]["ph"], "M");
}

}  // namespace
}  // namespace kiln
