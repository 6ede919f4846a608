#include "kiln/serving/version_folders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

TEST(VersionFolders, OnlyFoldersNamedByANumberAreVersions) {
  testing::TempDir dir;
  for (const char* name : {"3", "12", "007", ".writing-1-0", "v4", "5a", "99999999999999999999"})
    fs::create_directories(dir.file(name));
  dir.write("20", "a file, not a folder");
  EXPECT_THAT(list_versions(dir.path()), ElementsAre(3, 7, 12));
  EXPECT_EQ(next_version(dir.path()), 13);
}

TEST(VersionFolders, AMissingBasePathHasNoVersionsAndStartsAtOne) {
  testing::TempDir dir;
  EXPECT_THAT(list_versions(dir.file("none")), IsEmpty());
  EXPECT_EQ(next_version(dir.file("none")), 1);
}

TEST(VersionFolders, AStagedFolderIsPublishedUnderTheNextNumberAndIsNoVersionBefore) {
  testing::TempDir dir;
  std::string base = dir.file("models/fashion");
  std::string staging = staging_folder(base);
  EXPECT_TRUE(fs::is_directory(staging));
  EXPECT_THAT(list_versions(base), IsEmpty());  // a server polling now sees nothing
  std::ofstream(staging + "/model.yaml") << "format: kiln.export\n";
  EXPECT_EQ(publish_version(base, staging), 1);
  EXPECT_TRUE(fs::exists(base + "/1/model.yaml"));
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_EQ(publish_version(base, staging_folder(base)), 2);
  EXPECT_THAT(list_versions(base), ElementsAre(1, 2));
}

TEST(VersionFolders, PublishingAMissingFolderIsAnErrorNamingIt) {
  testing::TempDir dir;
  fs::create_directories(dir.file("base"));
  try {
    publish_version(dir.file("base"), dir.file("base/.gone"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(".gone"));
  }
}

TEST(VersionFolders, KeepingTheNewestRemovesTheOldestOnly) {
  testing::TempDir dir;
  for (const char* name : {"1", "2", "5", "9", "notes"}) fs::create_directories(dir.file(name));
  keep_newest_versions(dir.path(), 2);
  EXPECT_THAT(list_versions(dir.path()), ElementsAre(5, 9));
  EXPECT_TRUE(fs::exists(dir.file("notes")));
  keep_newest_versions(dir.path(), 5);
  EXPECT_THAT(list_versions(dir.path()), ElementsAre(5, 9));
}

}  // namespace
}  // namespace kiln::serving
