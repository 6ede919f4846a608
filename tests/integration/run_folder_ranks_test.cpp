// One writer of the run folder: a whole `kiln train` run by a process told it is rank 1 of a job
// leaves nothing in the run folder (rank 0 writes it), and rank 0 of the same job writes all of
// it. The other rank is a LoneRank's stand-in that always agrees.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "kiln/core/config.h"
#include "kiln/core/text_file.h"
#include "kiln/experiment/training_run.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_ranks.h"

namespace kiln::experiment {

using namespace engine;
namespace run_folder_ranks_test {

namespace fs = std::filesystem;

constexpr const char* kConfig = R"(
name: ranks
data:
  train: {type: synthetic, task: blobs, size: 64, seed: 1}
  val: {type: synthetic, task: blobs, size: 32, seed: 2}
  batch_size: 16
model: {type: sequential, layers: [{type: linear, out: 3}]}
loss: cross_entropy
metrics: [accuracy]
optimizer: {type: sgd, lr: 0.1}
train: {max: 8 steps, validate_every: 4 steps, log_every: 4 steps}
callbacks: [{type: checkpoint, every: 4 steps}]
runtime: {threads: 1}
)";

// Trains kConfig as rank `rank` of two into `run_dir`; returns the exit code.
int train_as(int rank, const std::string& run_dir, const kiln::testing::TempDir& dir) {
  TrainRequest request;
  request.config = load_config({dir.write("ranks.yaml", kConfig)}, {});
  request.run_dir = run_dir;
  request.context = std::make_shared<kiln::testing::LoneRank>(rank, 2);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::tmpfile(), &std::fclose);
  return run_training(request, out.get(), system_seconds).exit_code;
}

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(entry.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(RunFolderRanks, RankOneWritesNothingIntoTheRunFolder) {
  kiln::testing::TempDir dir;
  std::string run = dir.file("run");
  fs::create_directories(run);  // as rank 0 would have made it
  EXPECT_EQ(train_as(1, run, dir), 0);
  EXPECT_THAT(files_under(run), ::testing::IsEmpty());
}

TEST(RunFolderRanks, RankZeroWritesTheWholeRunFolder) {
  kiln::testing::TempDir dir;
  std::string run = dir.file("run");
  EXPECT_EQ(train_as(0, run, dir), 0);
  std::vector<std::string> files = files_under(run);
  for (const char* name :
       {"config.yaml", "run.json", "metrics.csv", "summary.json", "train.log", "inputs.json",
        "checkpoints/latest", "checkpoints/step-000000008/inputs.json"})
    EXPECT_THAT(files, ::testing::Contains(name));
  for (const char* events : {"tensorboard/events\\.out\\.tfevents\\..*",
                             "tensorboard/train/events\\.out\\.tfevents\\..*",
                             "tensorboard/val/events\\.out\\.tfevents\\..*"})
    EXPECT_THAT(files, ::testing::Contains(::testing::MatchesRegex(events)));
  Json record = Json::parse(read_text_file(run + "/run.json"));
  EXPECT_EQ(record["world_size"], 2);
  EXPECT_EQ(record["status"], "finished");
}

TEST(RunFolderRanks, RankZeroNamesTheNewFolderForEveryRank) {
  kiln::testing::TempDir dir;
  kiln::testing::ThreadRanks ranks(2);
  std::string config = dir.write("ranks.yaml", kConfig);
  TrainOutcome outcomes[2];
  auto train = [&](int rank) {
    TrainRequest request;
    request.config = load_config({config}, {});
    request.runs_root = dir.file("runs");
    request.context = ranks.context(rank);
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::tmpfile(), &std::fclose);
    outcomes[rank] = run_training(request, out.get(), system_seconds);
  };
  std::thread second(train, 1);
  train(0);
  second.join();
  EXPECT_EQ(outcomes[0].exit_code, 0);
  EXPECT_EQ(outcomes[1].exit_code, 0);
  EXPECT_EQ(outcomes[1].run_dir, outcomes[0].run_dir);
  std::vector<std::string> folders;  // one, rank 0's
  for (const auto& entry : fs::directory_iterator(dir.file("runs/ranks")))
    folders.push_back(entry.path().string());
  EXPECT_EQ(folders, std::vector<std::string>{outcomes[0].run_dir});
  EXPECT_THAT(files_under(outcomes[0].run_dir), ::testing::Contains("checkpoints/latest"));
}

TEST(RunFolderRanks, AGivenRunDirectoryThatHoldsARunIsRefused) {
  kiln::testing::TempDir dir;
  std::string run = dir.file("run");
  ASSERT_EQ(train_as(0, run, dir), 0);
  EXPECT_THROW(train_as(0, run, dir), UsageError);
}

}  // namespace run_folder_ranks_test
}  // namespace kiln::experiment
