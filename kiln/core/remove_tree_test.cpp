#include "kiln/core/remove_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void touch(const std::string& path) { std::ofstream(path) << "x"; }

TEST(RemoveTree, RemovesNestedFoldersAndFiles) {
  TempDir dir;
  std::string top = dir.path() + "/top";
  fs::create_directories(top + "/a/b/c");
  fs::create_directories(top + "/empty");
  touch(top + "/file");
  touch(top + "/a/b/c/deep");
  remove_tree(top);
  EXPECT_FALSE(fs::exists(top));
  EXPECT_TRUE(fs::exists(dir.path()));
}

TEST(RemoveTree, RemovesAPlainFile) {
  TempDir dir;
  touch(dir.path() + "/file");
  remove_tree(dir.path() + "/file");
  EXPECT_FALSE(fs::exists(dir.path() + "/file"));
}

TEST(RemoveTree, MissingPathIsNotAnError) {
  TempDir dir;
  EXPECT_NO_THROW(remove_tree(dir.path() + "/absent"));
  std::error_code error;
  EXPECT_TRUE(remove_tree(dir.path() + "/absent", error));
  EXPECT_FALSE(error);
}

TEST(RemoveTree, RemovesSymbolicLinksWithoutFollowingThem) {
  TempDir dir;
  fs::create_directories(dir.path() + "/kept");
  touch(dir.path() + "/kept/precious");
  fs::create_directories(dir.path() + "/doomed");
  fs::create_directory_symlink(dir.path() + "/kept", dir.path() + "/doomed/link");
  remove_tree(dir.path() + "/doomed");
  EXPECT_FALSE(fs::exists(dir.path() + "/doomed"));
  EXPECT_TRUE(fs::exists(dir.path() + "/kept/precious"));
}

TEST(RemoveTree, PathThroughAFileIsAnErrorNamingIt) {
  TempDir dir;
  touch(dir.path() + "/file");
  std::string below_a_file = dir.path() + "/file/child";
  try {
    remove_tree(below_a_file);
    ADD_FAILURE() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), below_a_file);
    EXPECT_EQ(e.error_number(), ENOTDIR);
  }
  std::error_code error;
  EXPECT_FALSE(remove_tree(below_a_file, error));
  EXPECT_EQ(error.value(), ENOTDIR);
  EXPECT_TRUE(fs::exists(dir.path() + "/file"));
}

TEST(RemoveTree, FailureNamesTheEntryThatCouldNotGo) {
  if (geteuid() == 0) GTEST_SKIP() << "root may delete from a read-only folder";
  TempDir dir;
  std::string locked = dir.path() + "/top/locked";
  fs::create_directories(locked);
  touch(locked + "/file");
  chmod(locked.c_str(), 0500);
  try {
    remove_tree(dir.path() + "/top");
    ADD_FAILURE() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), locked + "/file");
    EXPECT_NE(std::string(e.what()).find("cannot remove"), std::string::npos) << e.what();
  }
  std::error_code error;
  EXPECT_FALSE(remove_tree(dir.path() + "/top", error));
  EXPECT_EQ(error.value(), EACCES);
  chmod(locked.c_str(), 0700);
  remove_tree(dir.path() + "/top");
  EXPECT_FALSE(fs::exists(dir.path() + "/top"));
}

}  // namespace
}  // namespace kiln
