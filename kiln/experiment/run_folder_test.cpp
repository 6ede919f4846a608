// The one writer of a run folder: rank 0 writes each file, any other rank none; a resume's
// rewind removes later checkpoints and rows; run.json's record through a run's life.

#include "kiln/experiment/run_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {

namespace run_folder_test {

namespace fs = std::filesystem;
using ::testing::IsEmpty;

// Every write a run makes, through `folder`.
void write_everything(RunFolder& folder) {
  RunRecord record = RunRecord::started("kiln train x.yaml", 1614834367, 2);
  folder.write_config("name: x\n");
  folder.write_notes("a note");
  folder.write_record(record);
  folder.write_summary({{"steps", 3}});
  folder.write_inputs({{"inputs", Json::array()}});
  folder.metrics().append(1, 0.1, "train/loss", 0.5, 100);
  folder.metrics().end_record();
  folder.rewind_to(0);
  auto lock = folder.lock();
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(entry.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(RunFolder, RankZeroWritesEachFile) {
  kiln::testing::TempDir dir;
  RunFolder folder(run::RunDirectory::create_at(dir.file("run")), 0);
  EXPECT_TRUE(folder.writes());
  write_everything(folder);
  EXPECT_EQ(files_in(folder.path()),
            (std::vector<std::string>{"checkpoints", "config.yaml", "inputs.json", "lock",
                                      "metrics.csv", "notes.md", "run.json", "summary.json"}));
  EXPECT_EQ(read_text_file(folder.path() + "/notes.md"), "a note\n");
  EXPECT_EQ(folder.console_log(), folder.path() + "/train.log");
  EXPECT_EQ(folder.checkpoints_to_save(), folder.checkpoints());
}

TEST(RunFolder, AnyOtherRankWritesNothing) {
  kiln::testing::TempDir dir;
  fs::create_directories(dir.file("run"));
  RunFolder folder(run::RunDirectory::named(dir.file("run")), 1);
  EXPECT_FALSE(folder.writes());
  write_everything(folder);
  EXPECT_THAT(files_in(folder.path()), IsEmpty());
  EXPECT_EQ(folder.console_log(), "");
  EXPECT_EQ(folder.checkpoints_to_save(), "");
  EXPECT_EQ(folder.checkpoints(), dir.file("run") + "/checkpoints");  // still read, to rewind
}

TEST(RunFolder, RewindingRemovesLaterCheckpointsAndRows) {
  kiln::testing::TempDir dir;
  RunFolder folder(run::RunDirectory::create_at(dir.file("run")), 0);
  for (int64_t step : {4, 8}) {
    fs::create_directories(folder.checkpoints() + fmt::format("/step-{:09d}", step));
    folder.metrics().append(step, 1, "train/loss", 1, 100);
  }
  folder.rewind_to(4);
  EXPECT_TRUE(fs::exists(folder.checkpoints() + "/step-000000004"));
  EXPECT_FALSE(fs::exists(folder.checkpoints() + "/step-000000008"));
  EXPECT_EQ(read_text_file(folder.path() + "/metrics.csv"),
            "step,epoch,split,metric,value,wall_time\n4,1,train,loss,1,100.000\n");
}

TEST(RunRecord, FollowsARunFromStartToEndAndThroughAResume) {
  RunRecord record = RunRecord::started("kiln train x.yaml", 1614834367, 4);
  EXPECT_EQ(record.json()["status"], "running");
  EXPECT_EQ(record.json()["world_size"], 4);
  EXPECT_EQ(record.json()["start_time"], "2021-03-04T05:06:07Z");
  EXPECT_TRUE(record.stages().is_null());
  record.failed("loss became nan", 1614834400);
  EXPECT_EQ(record.json()["status"], "failed");
  EXPECT_EQ(record.json()["error"], "loss became nan");
  RunRecord resumed = RunRecord::resumed(record.json(), "kiln train --resume r", 1614834500, 2);
  EXPECT_EQ(resumed.json()["status"], "running");
  EXPECT_FALSE(resumed.json().contains("error"));
  EXPECT_FALSE(resumed.json().contains("end_time"));
  EXPECT_EQ(resumed.json()["resumed"][0]["command_line"], "kiln train --resume r");
  EXPECT_EQ(resumed.json()["resumed"][0]["world_size"], 2);
  resumed.ended(/*stopped_by_signal=*/true, 1614834600);
  EXPECT_EQ(resumed.json()["status"], "stopped");
  EXPECT_EQ(resumed.json()["end_time"], "2021-03-04T05:10:00Z");
}

}  // namespace run_folder_test
}  // namespace kiln::experiment
