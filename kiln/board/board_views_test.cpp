// What the board's views are served: a long run's metrics thinned with their spikes kept, the
// compare view's details, histograms as heat maps, and the runs cache that keeps the live table
// cheap (read again only when a run's files change).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "kiln/board/board_api.h"
#include "kiln/board/run_cache.h"
#include "kiln/tensorboard/event_log.h"
#include "tests/support/temp_dir.h"

namespace kiln::board {
namespace board_views_test {

namespace fs = std::filesystem;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

tensorboard::Histogram histogram_of(const std::vector<double>& values) {
  tensorboard::Histogram histogram;
  for (double value : values) histogram.add(value);
  return histogram;
}

std::string finished_run(testing::TempDir& dir, const std::string& name) {
  std::string run = dir.file("runs/" + name);
  fs::create_directories(run);
  write(
      run + "/run.json",
      R"({"status": "finished", "start_time": "2026-11-01T10:00:00Z", "end_time": "2026-11-01T10:01:00Z"})");
  write(run + "/config.yaml", "name: a\noptimizer: {lr: 0.1}\n");
  write(run + "/metrics.csv", "step,epoch,split,metric,value,wall_time\n1,0.1,val,loss,0.5,100\n");
  return run;
}

TEST(BoardMetrics, ALongTagIsThinnedKeepingItsSpikeAndEnds) {
  testing::TempDir dir;
  std::string run = finished_run(dir, "long");
  std::string rows = "step,epoch,split,metric,value,wall_time\n";
  for (int step = 1; step <= 10000; ++step) {
    double loss = step == 5003 ? 99.0 : 1.0 + 1.0 / step;
    rows += std::to_string(step) + ",1,train,loss," + std::to_string(loss) + ",100\n";
    if (step % 100 == 0) rows += std::to_string(step) + ",1,val,loss,0.5,100\n";
  }
  write(run + "/metrics.csv", rows);
  Json thinned = metric_rows(run, 0, 200);
  EXPECT_EQ(thinned["downsampled"], true);
  std::vector<int64_t> train_steps;
  int64_t val_rows = 0;
  for (const Json& row : thinned["rows"]) {
    if (row[2] == "val/loss") ++val_rows;
    if (row[2] == "train/loss") train_steps.push_back(row[0]);
  }
  EXPECT_EQ(val_rows, 100) << "a tag of no more than the points asked for is whole";
  EXPECT_LE(train_steps.size(), 202u);
  EXPECT_GE(train_steps.size(), 100u);
  EXPECT_EQ(train_steps.front(), 1);
  EXPECT_EQ(train_steps.back(), 10000);
  EXPECT_TRUE(std::is_sorted(train_steps.begin(), train_steps.end())) << "in file order";
  EXPECT_NE(std::find(train_steps.begin(), train_steps.end(), 5003), train_steps.end())
      << "the spike";
  Json whole = metric_rows(run, 0, 0);
  EXPECT_EQ(whole["rows"].size(), 10100u);
  EXPECT_EQ(whole["downsampled"], false);
  EXPECT_EQ(whole["next"], thinned["next"]);
}

// Asked for every row, a 214 MB metrics.csv took the board to 2.3 GB: a tag is thinned to
// kMaxPointsPerTag however few or no points are asked.
TEST(BoardMetrics, EveryRowAskedForIsAtMostAHundredThousandATag) {
  testing::TempDir dir;
  std::string run = finished_run(dir, "longer");
  std::string rows = "step,epoch,split,metric,value,wall_time\n";
  for (int step = 1; step <= 250000; ++step) rows += std::to_string(step) + ",1,train,loss,1,100\n";
  write(run + "/metrics.csv", rows);
  for (size_t asked : {size_t(0), size_t(1) << 40}) {
    Json answer = metric_rows(run, 0, asked);
    EXPECT_EQ(answer["downsampled"], true) << asked;
    EXPECT_LE(answer["rows"].size(), kMaxPointsPerTag + 2) << asked;
  }
}

TEST(BoardDetails, GiveEachRunsConfigValuesFinalValuesAndNotes) {
  testing::TempDir dir;
  finished_run(dir, "exp/a");
  write(dir.file("runs/exp/a/notes.md"), "tried a lower lr\n");
  Json details = run_details(dir.file("runs"), {"exp/a", "../outside", "exp/none"});
  ASSERT_EQ(details["runs"].size(), 1u) << "a name that is no run under the root is left out";
  const Json& run = details["runs"][0];
  EXPECT_EQ(run["run"], "exp/a");
  EXPECT_EQ(run["hparams"]["optimizer.lr"], 0.1);
  EXPECT_EQ(run["final"]["val/loss"], 0.5);
  EXPECT_EQ(run["notes"], "tried a lower lr\n");
}

TEST(BoardHistograms, AreHeatMapsOfEveryValueOverSteps) {
  testing::TempDir dir;
  std::string run = finished_run(dir, "h");
  {
    tensorboard::EventLog log(run + "/tensorboard", {0, "host", 1});
    log.histogram("train", "weights/w", 10, histogram_of({-1, 0, 0, 1}), 1);
    log.histogram("train", "weights/w", 20, histogram_of({-2, 2}), 2);
  }
  Json maps = run_histograms(run);
  ASSERT_EQ(maps["histograms"].size(), 1u);
  const Json& map = maps["histograms"][0];
  EXPECT_EQ(map["tag"], "weights/w");
  EXPECT_EQ(map["steps"], Json::parse("[10, 20]"));
  EXPECT_EQ(map["low"], -2.0);
  EXPECT_EQ(map["high"], 2.0);
  ASSERT_EQ(map["counts"].size(), 2u);
  double first = 0, second = 0;
  for (double count : map["counts"][0]) first += count;
  for (double count : map["counts"][1]) second += count;
  EXPECT_EQ(first, 4);
  EXPECT_EQ(second, 2);
  EXPECT_EQ(map["counts"][1][0], 1.0) << "-2: the lowest bin";
  EXPECT_EQ(map["counts"][1][kHistogramBins - 1], 1.0) << "2: the highest";
  EXPECT_TRUE(maps["problems"].empty());
}

// Same size, same modification time: the cache answers; a change of either reads again.
TEST(RunCache, ReadsARunAgainOnlyWhenItsFilesChange) {
  testing::TempDir dir;
  std::string run = finished_run(dir, "c");
  RunCache cache;
  EXPECT_EQ(cache.read({run})[0].hparams["optimizer.lr"], 0.1);
  struct stat before {};
  ASSERT_EQ(::stat((run + "/config.yaml").c_str(), &before), 0);
  write(run + "/config.yaml", "name: a\noptimizer: {lr: 0.2}\n");  // as long as before
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (run + "/config.yaml").c_str(), times, 0), 0);
  EXPECT_EQ(cache.read({run})[0].hparams["optimizer.lr"], 0.1) << "unchanged as far as it can tell";
  write(run + "/config.yaml", "name: a\noptimizer: {lr: 0.25}\n");
  EXPECT_EQ(cache.read({run})[0].hparams["optimizer.lr"], 0.25);
}

// A run that says it is running may have been killed without a file changing: read each time.
TEST(RunCache, ARunningRunIsReadEachTime) {
  testing::TempDir dir;
  std::string run = finished_run(dir, "r");
  write(run + "/run.json", R"({"status": "running", "start_time": "2026-11-01T10:00:00Z"})");
  RunCache cache;
  EXPECT_EQ(cache.read({run})[0].hparams["optimizer.lr"], 0.1);
  struct stat before {};
  ASSERT_EQ(::stat((run + "/config.yaml").c_str(), &before), 0);
  write(run + "/config.yaml", "name: a\noptimizer: {lr: 0.3}\n");
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (run + "/config.yaml").c_str(), times, 0), 0);
  EXPECT_EQ(cache.read({run})[0].hparams["optimizer.lr"], 0.3);
}

}  // namespace board_views_test
}  // namespace kiln::board
