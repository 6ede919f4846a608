// Hot reload without sockets or sleeps: each poll() is one look at the base path.

#include "kiln/serving/version_watcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/error.h"
#include "tests/support/fake_servable.h"
#include "tests/support/temp_dir.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class VersionWatcherTest : public ::testing::Test {
 protected:
  VersionWatcher watcher(VersionPolicy policy = {}, std::map<std::string, int64_t> labels = {}) {
    ServedModel model;
    model.name = "half";
    model.base_path = dir_.file("half");
    model.policy = policy;
    model.labels = std::move(labels);
    return VersionWatcher(
        {model}, table_,
        [this](const std::string&, const std::string& directory) -> std::shared_ptr<Servable> {
          loads_.push_back(fs::path(directory).filename().string());
          if (fs::exists(directory + "/damaged")) throw Error("model.yaml: damaged");
          return std::make_shared<testing::HalfPlusTwo>();
        },
        [this](const std::string& line) { log_.push_back(line); });
  }
  void add_version(int64_t version, bool damaged = false) {
    fs::create_directories(dir_.file("half/" + std::to_string(version)));
    if (damaged) dir_.write("half/" + std::to_string(version) + "/damaged", "");
  }
  std::vector<int64_t> served() {
    Route all;
    all.model = "half";
    return table_.status_versions(all);
  }

  testing::TempDir dir_;
  ModelTable table_;
  std::vector<std::string> loads_, log_;
};

TEST_F(VersionWatcherTest, ANewVersionReplacesTheLatestAndTheOldOneRetires) {
  add_version(1);
  add_version(2);
  VersionWatcher w = watcher();
  w.poll();
  EXPECT_THAT(served(), ElementsAre(2));
  Route latest;
  latest.model = "half";
  FoundVersion in_flight = table_.find(latest);
  add_version(3);
  w.poll();
  EXPECT_THAT(served(), ElementsAre(3));
  EXPECT_THAT(loads_, ElementsAre("2", "3"));  // version 1 was never wanted; 2 loaded once
  EXPECT_THAT(log_.back(), HasSubstr("version 2 retired"));
  EXPECT_EQ(in_flight.version, 2);  // a request that found version 2 still holds it
  w.poll();
  EXPECT_EQ(loads_.size(), 2u);  // nothing new: nothing loaded again
}

TEST_F(VersionWatcherTest, ADamagedVersionIsReportedOnceAndTheOthersKeepServing) {
  add_version(1);
  VersionWatcher w = watcher(VersionPolicy{VersionPolicy::Kind::kAll, 1, {}});
  w.poll();
  add_version(2, /*damaged=*/true);
  w.poll();
  w.poll();
  EXPECT_THAT(served(), ElementsAre(1));
  EXPECT_EQ(std::count(loads_.begin(), loads_.end(), "2"), 1);
  EXPECT_THAT(log_.back(), HasSubstr("version 2 not loaded: model.yaml: damaged"));
}

TEST_F(VersionWatcherTest, ADamagedLatestVersionLeavesTheOneBeforeServing) {
  add_version(1);
  VersionWatcher w = watcher();
  w.poll();
  add_version(2, /*damaged=*/true);
  w.poll();
  EXPECT_THAT(served(), ElementsAre(1));
  add_version(3);
  w.poll();
  EXPECT_THAT(served(), ElementsAre(3));
}

TEST_F(VersionWatcherTest, LabelsFollowTheVersionsLoaded) {
  add_version(4);
  add_version(5);
  VersionWatcher w = watcher(VersionPolicy{VersionPolicy::Kind::kAll, 1, {}}, {{"stable", 4}});
  w.poll();
  Route stable;
  stable.model = "half";
  stable.label = "stable";
  EXPECT_EQ(table_.find(stable).version, 4);
}

TEST_F(VersionWatcherTest, AnEmptyBasePathServesNothingUntilAVersionComes) {
  VersionWatcher w = watcher();
  w.poll();
  EXPECT_TRUE(table_.models().empty());
  add_version(1);
  w.poll();
  EXPECT_THAT(served(), ElementsAre(1));
}

}  // namespace
}  // namespace kiln::serving
