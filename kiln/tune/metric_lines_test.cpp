// How a program a study runs reports its values: kiln-metric lines and metrics-file records,
// and the mistakes in them that are named.

#include "kiln/tune/metric_lines.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::tune {
namespace metric_lines_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(MetricLines, ALineOfValuesAndAStep) {
  std::optional<MetricReport> report =
      parse_metric_line("kiln-metric val_loss=0.25 accuracy=9.5e-1  step=7");
  ASSERT_TRUE(report);
  EXPECT_EQ(report->values,
            (std::map<std::string, double>{{"val_loss", 0.25}, {"accuracy", 0.95}}));
  EXPECT_EQ(report->step, 7);
  report = parse_metric_line("kiln-metric\tloss=-3");
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->step);  // the program's final word
}

TEST(MetricLines, OtherLinesAreThePrograms) {
  for (const char* line :
       {"epoch 3: loss 0.2", "kiln-metrics loss=1", " kiln-metric loss=1", "", "kiln-metri"})
    EXPECT_FALSE(parse_metric_line(line)) << line;
}

TEST(MetricLines, AMalformedReportSaysWhatIsWrong) {
  auto refused = [](const std::string& line, const char* why) {
    EXPECT_THAT([&] { parse_metric_line(line); }, ThrowsMessage<Error>(HasSubstr(why))) << line;
  };
  refused("kiln-metric", "no NAME=VALUE");
  refused("kiln-metric step=3", "no NAME=VALUE");
  refused("kiln-metric loss", "\"loss\" is not NAME=VALUE");
  refused("kiln-metric =3", "\"=3\" is not NAME=VALUE");
  refused("kiln-metric loss=abc", "loss=abc is no finite number");
  refused("kiln-metric loss=0.5x", "loss=0.5x is no finite number");
  refused("kiln-metric loss=nan", "loss=nan is no finite number");
  refused("kiln-metric loss=0x10", "loss=0x10 is no finite number");  // strtod reads it as 16
  refused("kiln-metric loss=0x1p-3", "loss=0x1p-3 is no finite number");
  refused("kiln-metric loss=inf", "is no finite number");
  refused("kiln-metric loss=1 step=-1", "step=-1 is no whole number from 0");
  refused("kiln-metric loss=1 step=1.5", "step=1.5 is no whole number");
  refused("kiln-metric loss=1 step=99999999999999999999", "is no whole number");
  refused("kiln-metric loss=1 loss=2", "loss is given twice");
  refused("kiln-metric loss=1 step=1 step=2", "step is given twice");
  refused("kiln-metric loss=1 " + std::string(kMaxMetricLine, 'x'), "at most");
  // A metrics file of 6,000 lines of 3,000 names each once held a study at 1.4 GB.
  std::string many = "kiln-metric";
  for (size_t i = 0; i <= kMaxReportValues; ++i) many += " v" + std::to_string(i) + "=1";
  refused(many, "more than 256 values in one report");
  Json record = Json::object();
  for (size_t i = 0; i <= kMaxReportValues; ++i) record["v" + std::to_string(i)] = 1;
  EXPECT_THROW(parse_metric_record(record), Error);
  record.erase("v0");
  record["step"] = 3;
  EXPECT_EQ(parse_metric_record(record).values.size(), kMaxReportValues);
}

TEST(MetricLines, ARecordOfTheMetricsFile) {
  MetricReport report = parse_metric_record(Json::parse(R"({"loss": 0.5, "acc": 1, "step": 4})"));
  EXPECT_EQ(report.values, (std::map<std::string, double>{{"acc", 1}, {"loss", 0.5}}));
  EXPECT_EQ(report.step, 4);
  auto refused = [](const char* json, const char* why) {
    EXPECT_THAT([&] { parse_metric_record(Json::parse(json)); },
                ThrowsMessage<Error>(HasSubstr(why)))
        << json;
  };
  refused("[1]", "expected an object");
  refused(R"({"step": 2})", "holds no value");
  refused(R"({"": 3})", "a value without a name");  // found by fuzz_metric_lines
  refused(R"({"loss": "low"})", "\"loss\" is no finite number");
  refused(R"({"loss": null})", "\"loss\" is no finite number");
  refused(R"({"loss": 1, "step": -2})", "\"step\" is no whole number from 0");
  refused(R"({"loss": 1, "step": 2.5})", "\"step\" is no whole number from 0");
}

}  // namespace metric_lines_test
}  // namespace kiln::tune
