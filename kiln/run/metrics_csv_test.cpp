// metrics.csv: the writer's long format with a single header across reopenings, the trim a
// resume makes, and the checked readers of its tail and of what a live run appended.

#include "kiln/run/metrics_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::run {
namespace metrics_csv_test {

using ::testing::HasSubstr;

TEST(MetricsCsv, WritesTheHeaderOnceAndOneLongFormatRowPerValue) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  {
    MetricsCsv log(path);
    log.append(100, 0.5, "train/loss", 0.25, 12.5);
    log.append(200, 1, "val/accuracy", 0.875, 13.0);
    // Rows are flushed as they are written, for readers of a live run.
    EXPECT_EQ(read_text_file(path),
              "step,epoch,split,metric,value,wall_time\n"
              "100,0.5,train,loss,0.25,12.500\n"
              "200,1,val,accuracy,0.875,13.000\n");
  }
  MetricsCsv reopened(path);
  reopened.append(300, 1.25, "train/samples_per_s", 1234.5, 14.25);
  EXPECT_EQ(read_text_file(path),
            "step,epoch,split,metric,value,wall_time\n"
            "100,0.5,train,loss,0.25,12.500\n"
            "200,1,val,accuracy,0.875,13.000\n"
            "300,1.25,train,samples_per_s,1234.5,14.250\n");
}

TEST(MetricsCsv, KeepsNineSignificantDigitsAndAnUnsplitTag) {
  kiln::testing::TempDir dir;
  MetricsCsv log(dir.file("metrics.csv"));
  log.append(1, 0.333333333, "lr", 0.123456789012, 1.0);
  EXPECT_THAT(read_text_file(dir.file("metrics.csv")),
              HasSubstr("\n1,0.333333,,lr,0.123456789,1.000\n"));
}

TEST(MetricsCsv, AnUnwritablePathIsAnIoError) {
  kiln::testing::TempDir dir;
  EXPECT_THROW(MetricsCsv(dir.file("missing/metrics.csv")), IoError);
}

TEST(MetricsCsv, TrimmingDropsLaterRowsAndARowCutShortAndKeepsTheHeader) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  write_file_atomic(path, std::string(kMetricsHeader) +
                              "\n10,1,train,loss,0.5,1.000\n20,2,train,loss,0.4,2.000\n20,2,val");
  trim_metrics(path, 10);
  EXPECT_EQ(read_text_file(path), std::string(kMetricsHeader) + "\n10,1,train,loss,0.5,1.000\n");
  trim_metrics(dir.file("missing.csv"), 10);  // nothing to trim
}

TEST(MetricsCsv, TheTailIsCheckedRowByRowAndNamesTheByteOfTheFirstDamagedRow) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  EXPECT_TRUE(read_metrics_tail(path, 1024).missing);
  write_file_atomic(path,
                    std::string(kMetricsHeader) + "\n10,1,train,loss,0.5,1.000\nx,1,a,b,1,1\n");
  MetricsTail tail = read_metrics_tail(path, 1024);
  ASSERT_EQ(tail.rows.size(), 1u);
  EXPECT_EQ(tail.rows[0].tag, "train/loss");
  EXPECT_EQ(tail.damaged_row, "metrics.csv, byte 66: step \"x\" is not a whole number >= 0");
  write_file_atomic(path, "step,value\n1,2\n");
  EXPECT_THAT(read_metrics_tail(path, 1024).unreadable, HasSubstr("its header is \"step,value\""));
}

TEST(MetricsCsv, ALiveReaderGetsOnlyNewWholeRowsAndStartsOverAfterARewrite) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  MetricsCsv csv(path);
  csv.append(1, 0.1, "train/loss", 0.5, 1);
  MetricsSince first = read_metrics_since(dir.path(), 0);
  ASSERT_EQ(first.rows.size(), 1u);
  csv.append(2, 0.2, "train/loss", 0.4, 2);
  MetricsSince second = read_metrics_since(dir.path(), first.next);
  ASSERT_EQ(second.rows.size(), 1u);
  EXPECT_EQ(second.rows[0].step, 2);
  EXPECT_FALSE(second.restart);
  csv.truncate_after(0);
  csv.append(1, 0.1, "train/loss", 0.7, 3);
  MetricsSince after = read_metrics_since(dir.path(), second.next);
  EXPECT_TRUE(after.restart);
  ASSERT_EQ(after.rows.size(), 1u);
  EXPECT_EQ(after.rows[0].value, 0.7);
}

}  // namespace metrics_csv_test
}  // namespace kiln::run
