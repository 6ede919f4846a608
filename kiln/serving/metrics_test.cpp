#include "kiln/serving/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/serving/rest/rest_handler.h"
#include "tests/support/fake_servable.h"

namespace kiln::serving {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServingMetrics, CountsRequestsByStatusWithCumulativeHistograms) {
  ServingMetrics metrics;
  metrics.request("half", "predict", 200, 0.0007);
  metrics.request("half", "predict", 200, 0.02);
  metrics.request("half", "predict", 400, 0.0001);
  metrics.batch("half", 3);
  std::string text = metrics.text({{"half", 2}});
  EXPECT_THAT(text, HasSubstr("# TYPE kiln_serving_requests_total counter\n"));
  EXPECT_THAT(
      text,
      HasSubstr("kiln_serving_requests_total{model=\"half\",api=\"predict\",code=\"200\"} 2\n"));
  EXPECT_THAT(
      text,
      HasSubstr("kiln_serving_requests_total{model=\"half\",api=\"predict\",code=\"400\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_request_seconds_bucket{model=\"half\",api=\"predict\","
                              "le=\"0.001\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_request_seconds_bucket{model=\"half\",api=\"predict\","
                              "le=\"+Inf\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("kiln_serving_request_seconds_count{model=\"half\",api=\"predict\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_batch_examples_bucket{model=\"half\",le=\"2\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_batch_examples_bucket{model=\"half\",le=\"4\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_versions{model=\"half\"} 2\n"));
}

TEST(ServingMetrics, LabelValuesAreEscaped) {
  ServingMetrics metrics;
  metrics.request("a\"b\\c\nd", "", 404, 0);
  EXPECT_THAT(metrics.text({}), HasSubstr("model=\"a\\\"b\\\\c\\nd\""));
}

TEST(ServingMetrics, TheHandlerCountsWhatItAnswers) {
  ModelTable table;
  table.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()}});
  ServingMetrics metrics;
  RestHandler handler(table, {}, &metrics);
  handler.handle("POST", "/v1/models/half:predict", R"({"instances": [[1.0]]})");
  handler.handle("POST", "/v1/models/half:predict", "not json");
  handler.handle("GET", "/nowhere", "");
  std::string text = handler.metrics_text();
  EXPECT_THAT(text, HasSubstr("{model=\"half\",api=\"predict\",code=\"200\"} 1"));
  EXPECT_THAT(text, HasSubstr("{model=\"half\",api=\"predict\",code=\"400\"} 1"));
  EXPECT_THAT(text, HasSubstr("{model=\"\",api=\"\",code=\"400\"} 1"));
  EXPECT_THAT(text, HasSubstr("kiln_serving_versions{model=\"half\"} 1"));
}

// 100,000 made-up model names once grew /metrics to 132 MB: names the server does not serve share
// the series of requests that named no model.
TEST(ServingMetrics, ModelsTheServerDoesNotServeMakeNoSeriesOfTheirOwn) {
  ModelTable table;
  table.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()}});
  ServingMetrics metrics;
  RestHandler handler(table, {}, &metrics);
  for (int i = 0; i < 50; ++i)
    handler.handle("POST", "/v1/models/made-up-" + std::to_string(i) + ":predict", "{}");
  std::string text = handler.metrics_text();
  EXPECT_THAT(text, Not(HasSubstr("made-up")));
  EXPECT_THAT(text, HasSubstr("{model=\"\",api=\"\",code=\"404\"} 50"));
  size_t before = text.size();
  for (int i = 50; i < 100; ++i)
    handler.handle("GET", "/v1/models/made-up-" + std::to_string(i), "");
  EXPECT_LT(handler.metrics_text().size(), before + 200);
}

}  // namespace
}  // namespace kiln::serving
