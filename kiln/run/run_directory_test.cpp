// The run directory: its `<root>/<name>/<stamp>[-N]` naming, opening an existing run, JSON files
// and the checked reader of run.json.

#include "kiln/run/run_directory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/run/run_info.h"
#include "tests/support/temp_dir.h"

namespace kiln::run {
namespace run_directory_test {

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
  EXPECT_EQ(read_record(run.path()), info);
  write_file_atomic(run.file("summary.json"), "{\"final\": ");
  try {
    read_summary(run.path());
    FAIL() << "parsed a truncated summary.json";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), run.file("summary.json"));
  }
}

TEST(RunRecord, WhatReadRunWouldCallAProblemIsADataErrorNamingTheFile) {
  kiln::testing::TempDir root;
  RunDirectory run = RunDirectory::create(root.path(), "x", kNow);
  try {
    read_record(run.path());
    FAIL() << "read a missing run.json";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), run.file("run.json"));
  }
  run.write_json("run.json", {{"status", "paused"}, {"start_time", "yesterday"}});
  try {
    read_record(run.path());
    FAIL() << "read a run.json with an unknown status";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"status\" is \"paused\", not running"));
    EXPECT_THAT(e.what(), HasSubstr("\"start_time\" is \"yesterday\""));
  }
  EXPECT_EQ(read_summary(run.path()), std::nullopt);  // a run still training has none
  run.write_json("summary.json", {{"steps", -3}});
  EXPECT_THROW(read_summary(run.path()), DataError);
}

TEST(NewestUnfinishedRun, SkipsFinishedRunsAndCountsAnUnreadableOneAsUnfinished) {
  kiln::testing::TempDir root;
  RunDirectory older = RunDirectory::create(root.path(), "x", kNow);
  RunDirectory newer = RunDirectory::create(root.path(), "x", kNow + 60);
  for (const RunDirectory* run : {&older, &newer})
    write_file_atomic(run->file("config.yaml"), "name: x\n");
  older.write_json("run.json", {{"status", "stopped"}});
  newer.write_json("run.json", {{"status", "finished"}});
  EXPECT_EQ(newest_unfinished_run(root.path(), "x"), older.path());
  write_file_atomic(newer.file("run.json"), "{\"status\": \"fin");
  EXPECT_EQ(newest_unfinished_run(root.path(), "x"), newer.path());
  EXPECT_THROW(newest_unfinished_run(root.path(), "y"), UsageError);
}

TEST(IsoTime, FormatsUtc) {
  EXPECT_EQ(iso_time(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso_time(kNow), "2021-03-04T05:06:07Z");
}

}  // namespace run_directory_test
}  // namespace kiln::run
