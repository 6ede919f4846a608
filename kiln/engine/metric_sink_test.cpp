// Metric sinks: metrics.csv forgets the rows after a resumed step and goes on appending; the
// console's sink prints the training and validation lines of a record; a fan-out feeds each
// sink in turn.

#include "kiln/engine/metric_sink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include <cstdio>
#include <functional>

#include <fmt/format.h>

#include "kiln/core/console.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::engine {
namespace metric_sink_test {

using ::testing::HasSubstr;

// Remembers what it was given, as text.
class RecordingSink : public MetricSink {
 public:
  void append(int64_t step, double, const std::string& tag, double value, double) override {
    seen += fmt::format("{} {}={} ", step, tag, value);
  }
  void end_record() override { seen += "| "; }
  void truncate_after(int64_t step) override { seen += fmt::format("truncate {} ", step); }
  std::string seen;
};

TEST(MetricsLog, TruncatingKeepsTheRowsUpToTheStepAndGoesOnAppending) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  MetricsLog log(path);
  for (int64_t step : {1, 2, 3}) log.append(step, 0.5, "train/loss", double(step), 100);
  log.truncate_after(2);
  log.append(3, 0.75, "val/loss", 0.25, 101);
  EXPECT_EQ(read_text_file(path),
            "step,epoch,split,metric,value,wall_time\n"
            "1,0.5,train,loss,1,100.000\n"
            "2,0.5,train,loss,2,100.000\n"
            "3,0.75,val,loss,0.25,101.000\n");
}

TEST(MetricsLog, TruncatingBeforeTheFirstStepKeepsTheHeaderOnly) {
  kiln::testing::TempDir dir;
  MetricsLog log(dir.file("metrics.csv"));
  log.append(5, 1, "train/loss", 1, 100);
  log.truncate_after(-1);
  EXPECT_EQ(read_text_file(dir.file("metrics.csv")), "step,epoch,split,metric,value,wall_time\n");
}

// The lines a console sink prints for the records given to it.
std::string console_lines(const std::function<void(MetricSink&)>& records) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("out.txt");
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(path.c_str(), "w"),
                                                        &std::fclose);
    Console console(out.get(), false, "", [] { return 0.0; });
    ConsoleMetricSink sink(console);
    records(sink);
  }
  // Without the time each plain line begins with (console_test.cpp checks it).
  return std::regex_replace(read_text_file(path),
                            std::regex("(^|\n)[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} "), "$1");
}

TEST(ConsoleMetricSink, PrintsATrainingLineForARecordWithThroughput) {
  std::string printed = console_lines([](MetricSink& sink) {
    sink.append(120, 1.5, "train/loss", 0.31234, 0);
    sink.append(120, 1.5, "train/lr", 0.001, 0);
    sink.append(120, 1.5, "train/samples_per_s", 8512.4, 0);
    sink.append(120, 1.5, "train/time/data", 0.021, 0);
    sink.end_record();
  });
  EXPECT_EQ(printed,
            "step 120 epoch 1.50  loss 0.3123  lr 0.001  8512 samples/s  data wait 2.1%\n");
}

TEST(ConsoleMetricSink, PrintsAValidationLineAndNothingForOtherRecords) {
  std::string printed = console_lines([](MetricSink& sink) {
    sink.append(40, 1, "val/loss", 0.5, 0);
    sink.append(40, 1, "val/accuracy", 0.875, 0);
    sink.end_record();
    sink.append(41, 1, "train/skipped_records", 3, 0);
    sink.end_record();
  });
  EXPECT_EQ(printed, "validation at step 40:  val/accuracy 0.8750  val/loss 0.5000\n");
}

TEST(MetricSinks, FeedsEverySinkInTurn) {
  RecordingSink first, second;
  MetricSinks sinks({&first, &second});
  sinks.append(7, 0.1, "val/loss", 0.5, 0);
  sinks.end_record();
  sinks.truncate_after(3);
  EXPECT_EQ(first.seen, "7 val/loss=0.5 | truncate 3 ");
  EXPECT_EQ(second.seen, first.seen);
}

}  // namespace metric_sink_test
}  // namespace kiln::engine
