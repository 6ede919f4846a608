// End-to-end: the export callback writes a version folder at every validation and keeps the
// newest; `kiln export` writes the next version of a run's model where it is told to.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace export_e2e_test {

using ::testing::HasSubstr;
using testing::run_dir_of;
namespace fs = std::filesystem;

TEST(ExportE2e, TrainingExportsAtEveryValidationAndKilnExportWritesTheNextVersion) {
  testing::TempDir dir;
  std::string data = dir.write("rows.csv", testing::binary_rows(200));
  std::string config = dir.write(
      "binary.yaml",
      testing::binary_config(
          data, data,
          "train: {max: 40 steps, validate_every: 10 steps, monitor: val/accuracy, mode: max}\n"
          "callbacks: [{type: export, when: validation, keep: 2}]\n"));
  auto run = testing::run_command(std::string(KILN_BINARY) + " train " + config + " --runs-root " +
                                  dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string run_dir = run_dir_of(run.out);
  EXPECT_THAT(run.out, HasSubstr("exported version 4: " + run_dir + "/export/binary/4"));
  EXPECT_FALSE(fs::exists(run_dir + "/export/binary/2"));  // keep: 2
  EXPECT_TRUE(fs::exists(run_dir + "/export/binary/3/model.yaml"));
  EXPECT_TRUE(fs::exists(run_dir + "/export/binary/4/model.safetensors"));

  auto exported =
      testing::run_command(std::string(KILN_BINARY) + " export " + run_dir +
                           " --checkpoint last --to " + dir.file("models") + " --name fraud");
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  EXPECT_THAT(exported.out, HasSubstr("as version 1: " + dir.file("models") + "/fraud/1"));
  EXPECT_TRUE(fs::exists(dir.file("models/fraud/1/model.yaml")));

  auto next = testing::run_command(std::string(KILN_BINARY) + " export " + run_dir);
  ASSERT_EQ(next.exit_code, 0) << next.out << next.err;
  EXPECT_THAT(next.out, HasSubstr("as version 5: " + run_dir + "/export/binary/5"));
}

TEST(ExportE2e, AFolderThatIsNoRunIsAUsageError) {
  testing::TempDir dir;
  fs::create_directories(dir.file("empty"));
  auto run = testing::run_command(std::string(KILN_BINARY) + " export " + dir.file("empty"));
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr(dir.file("empty")));
}

}  // namespace export_e2e_test
}  // namespace kiln
