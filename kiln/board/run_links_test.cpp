#include "kiln/board/run_links.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace kiln::board {
namespace run_links_test {

namespace fs = std::filesystem;

// Sets the modification time of each of `folders` to `seconds` (since 1970).
void set_times(const std::vector<std::string>& folders, time_t seconds) {
  for (const std::string& folder : folders) {
    timespec times[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, folder.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << folder;
  }
}

class RunLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.file("runs/a/tensorboard/val"));
    fs::create_directories(dir_.file("outside"));
    std::ofstream(dir_.file("outside/secret")) << "x";
    std::ofstream(dir_.file("runs/a/notes.md")) << "notes";
    base_ = fs::canonical(dir_.file("runs"));
    run_ = base_ / "a";
  }
  std::vector<std::string> folders() const {
    return {run_.string(), (run_ / "tensorboard").string(), (run_ / "tensorboard/val").string()};
  }

  testing::TempDir dir_;
  fs::path base_, run_;
  RunLinks links_;
};

// A run's answer is kept while its folders' times stay: the table of 2,000 runs every 2 s
// listed every run's event folders (0.12 s an answer, from 0.06 s before the links were checked).
TEST_F(RunLinksTest, AVerdictIsKeptWhileTheFoldersTimesStay) {
  time_t old = std::time(nullptr) - 3600;
  set_times(folders(), old);
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  fs::create_symlink(dir_.file("outside/secret"), run_ / "tensorboard/val/events.out");
  set_times(folders(), old);  // as if the link came in the same tick as the verdict
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_)) << "kept";
  EXPECT_FALSE(RunLinks::look(base_, run_)) << "looked at afresh";
  set_times(folders(), old + 1);  // the folder's time moved with the link
  EXPECT_FALSE(links_.reads_stay_inside(base_, run_));
}

// A folder changed within the last seconds may change again with the same time: nothing of it
// is kept, and a link made just after a verdict is seen.
TEST_F(RunLinksTest, AFolderChangedJustNowIsLookedAtEachTime) {
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  fs::remove(run_ / "notes.md");
  fs::create_symlink(dir_.file("outside/secret"), run_ / "notes.md");
  EXPECT_FALSE(links_.reads_stay_inside(base_, run_));
  fs::remove(run_ / "notes.md");
  fs::create_symlink(base_ / "a/tensorboard", run_ / "notes.md");  // inside the root: followed
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
}

}  // namespace run_links_test
}  // namespace kiln::board
