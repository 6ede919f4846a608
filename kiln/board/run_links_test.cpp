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

// Sets the modification time of `path` to `seconds` (since 1970), as `touch -d` does; its
// status-change time moves to now, which nothing can set back.
void set_modification_time(const std::string& path, time_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

class RunLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.file("runs/a/tensorboard/val"));
    fs::create_directories(dir_.file("runs/shared"));
    fs::create_directories(dir_.file("outside"));
    std::ofstream(dir_.file("outside/secret")) << "x";
    std::ofstream(dir_.file("runs/a/notes.md")) << "notes";
    std::ofstream(dir_.file("runs/shared/notes.md")) << "shared";
    base_ = fs::canonical(dir_.file("runs"));
    run_ = base_ / "a";
  }

  testing::TempDir dir_;
  fs::path base_, run_;
  // Ten seconds on: every folder here has settled.
  RunLinks links_{[] { return int64_t(std::time(nullptr)) + 10; }};
};

// A run's answer is kept while its folders stay as they were: the table of 2,000 runs every 2 s
// listed every run's event folders (0.12 s an answer, from 0.06 s before links were checked).
// A file replaced by a link out, its folder's modification time set back (an outside campaign's
// find: the run stayed listed, with the outside file's values), is seen all the same.
TEST_F(RunLinksTest, AVerdictIsKeptUntilTheFoldersChangeHoweverTheirTimesAreSetBack) {
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  EXPECT_EQ(links_.looks(), 1u) << "kept";
  struct stat before {};
  ASSERT_EQ(::lstat(run_.c_str(), &before), 0);
  fs::remove(run_ / "notes.md");
  fs::create_symlink(dir_.file("outside/secret"), run_ / "notes.md");
  set_modification_time(run_.string(), before.st_mtim.tv_sec);
  EXPECT_FALSE(links_.reads_stay_inside(base_, run_));
  EXPECT_EQ(links_.looks(), 2u);
}

// A run holding a link that stays inside is looked at each time: the folder the link passes
// through may become a link out without any change to the run's own folders.
TEST_F(RunLinksTest, ARunHoldingALinkIsLookedAtEachTime) {
  fs::remove(run_ / "notes.md");
  fs::create_symlink(base_ / "shared/notes.md", run_ / "notes.md");
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  EXPECT_TRUE(links_.reads_stay_inside(base_, run_));
  EXPECT_EQ(links_.looks(), 2u);
  fs::remove_all(base_ / "shared");
  fs::create_directory_symlink(dir_.file("outside"), base_ / "shared");
  std::ofstream(dir_.file("outside/notes.md")) << "outside";
  EXPECT_FALSE(links_.reads_stay_inside(base_, run_));
}

// A folder changed within the last seconds may change again with the same times: nothing of it
// is kept, and a link made just after a verdict is seen (the real clock).
TEST_F(RunLinksTest, AFolderChangedJustNowIsLookedAtEachTime) {
  RunLinks links;
  EXPECT_TRUE(links.reads_stay_inside(base_, run_));
  fs::remove(run_ / "notes.md");
  fs::create_symlink(dir_.file("outside/secret"), run_ / "notes.md");
  EXPECT_FALSE(links.reads_stay_inside(base_, run_));
  fs::remove(run_ / "notes.md");
  fs::create_symlink(base_ / "shared/notes.md", run_ / "notes.md");  // inside the root: followed
  EXPECT_TRUE(links.reads_stay_inside(base_, run_));
  EXPECT_EQ(links.looks(), 3u);
}

}  // namespace run_links_test
}  // namespace kiln::board
