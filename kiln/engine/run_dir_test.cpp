// The run directory: its `<root>/<name>/<stamp>[-N]` naming, opening an existing run, JSON files,
// and metrics.csv in long format with a single header across reopenings.

#include "kiln/engine/run_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::engine {
namespace run_dir_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// 2021-03-04 05:06:07 UTC; the stamp is local time, so the test formats it the same way.
constexpr std::time_t kNow = 1614834367;

std::string local_stamp(std::time_t t) {
  std::tm local{};
  localtime_r(&t, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &local);
  return text;
}

TEST(RunDirectory, IsNamedRootNameAndLocalTimeStamp) {
  kiln::testing::TempDir root;
  RunDirectory run = RunDirectory::create(root.path(), "mnist", kNow);
  EXPECT_EQ(run.path(), root.path() + "/mnist/" + local_stamp(kNow));
  EXPECT_THAT(local_stamp(kNow), MatchesRegex("2021030[34]-[0-9]{6}"));
  EXPECT_TRUE(fs::is_directory(run.path()));
  EXPECT_TRUE(fs::is_directory(run.checkpoints()));
  EXPECT_EQ(run.file("metrics.csv"), run.path() + "/metrics.csv");
}

TEST(RunDirectory, RunsStartedInTheSameSecondGetANumberSuffix) {
  kiln::testing::TempDir root;
  std::string first = RunDirectory::create(root.path(), "mnist", kNow).path();
  std::string second = RunDirectory::create(root.path(), "mnist", kNow).path();
  std::string third = RunDirectory::create(root.path(), "mnist", kNow).path();
  EXPECT_EQ(second, first + "-1");
  EXPECT_EQ(third, first + "-2");
  std::string next_second = RunDirectory::create(root.path(), "mnist", kNow + 1).path();
  EXPECT_EQ(next_second, root.path() + "/mnist/" + local_stamp(kNow + 1));
}

TEST(RunDirectory, OpensARunAndTrimsTrailingSlashes) {
  kiln::testing::TempDir root;
  RunDirectory created = RunDirectory::create(root.path(), "x", kNow);
  write_file_atomic(created.file("config.yaml"), "name: x\n");
  EXPECT_EQ(RunDirectory::open(created.path()).path(), created.path());
  EXPECT_EQ(RunDirectory::open(created.path() + "//").path(), created.path());
}

TEST(RunDirectory, OpeningANonRunIsAUsageErrorSayingWhy) {
  kiln::testing::TempDir root;
  for (const std::string& path : {root.path(), root.path() + "/missing"}) {
    try {
      RunDirectory::open(path);
      ADD_FAILURE() << "opened " << path;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path));
      EXPECT_THAT(e.what(), HasSubstr("not a run directory"));
      EXPECT_THAT(e.what(), HasSubstr("config.yaml"));
    }
  }
}

TEST(RunDirectory, JsonFilesRoundTripAndAMalformedOneIsADataError) {
  kiln::testing::TempDir root;
  RunDirectory run = RunDirectory::create(root.path(), "x", kNow);
  Json info = {{"status", "running"}, {"world_size", 1}};
  run.write_json("run.json", info);
  EXPECT_EQ(run.read_json("run.json"), info);
  write_file_atomic(run.file("summary.json"), "{\"final\": ");
  try {
    run.read_json("summary.json");
    FAIL() << "parsed a truncated summary.json";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), run.file("summary.json"));
  }
}

TEST(MetricsLog, WritesTheHeaderOnceAndOneLongFormatRowPerValue) {
  kiln::testing::TempDir dir;
  std::string path = dir.file("metrics.csv");
  {
    MetricsLog log(path);
    log.append(100, 0.5, "train/loss", 0.25, 12.5);
    log.append(200, 1, "val/accuracy", 0.875, 13.0);
    // Rows are flushed as they are written, for readers of a live run.
    EXPECT_EQ(read_text_file(path),
              "step,epoch,split,metric,value,wall_time\n"
              "100,0.5,train,loss,0.25,12.500\n"
              "200,1,val,accuracy,0.875,13.000\n");
  }
  MetricsLog reopened(path);
  reopened.append(300, 1.25, "train/samples_per_s", 1234.5, 14.25);
  EXPECT_EQ(read_text_file(path),
            "step,epoch,split,metric,value,wall_time\n"
            "100,0.5,train,loss,0.25,12.500\n"
            "200,1,val,accuracy,0.875,13.000\n"
            "300,1.25,train,samples_per_s,1234.5,14.250\n");
}

TEST(MetricsLog, KeepsNineSignificantDigitsAndAnUnsplitTag) {
  kiln::testing::TempDir dir;
  MetricsLog log(dir.file("metrics.csv"));
  log.append(1, 0.333333333, "lr", 0.123456789012, 1.0);
  EXPECT_THAT(read_text_file(dir.file("metrics.csv")),
              HasSubstr("\n1,0.333333,,lr,0.123456789,1.000\n"));
}

TEST(MetricsLog, AnUnwritablePathIsAnIoError) {
  kiln::testing::TempDir dir;
  EXPECT_THROW(MetricsLog(dir.file("missing/metrics.csv")), IoError);
}

TEST(IsoTime, FormatsUtc) {
  EXPECT_EQ(iso_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso_time(kNow), "2021-03-04T05:06:07Z");
}

}  // namespace run_dir_test
}  // namespace kiln::engine
