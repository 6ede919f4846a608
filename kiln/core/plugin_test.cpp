#include "kiln/core/plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

std::string load_error(const std::string& path) {
  try {
    load_plugin(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Plugin, AMissingLibraryNamesThePathAndTheReason) {
  TempDir dir;
  std::string path = dir.file("libnothing.so");
  std::string error = load_error(path);
  EXPECT_EQ(error, "cannot load plugin " + path +
                       ": cannot open shared object file: No such file or directory");
}

TEST(Plugin, AFileThatIsNoLibrarySaysSo) {
  TempDir dir;
  std::string path = dir.write("libfake.so", std::string(4096, 'x'));
  EXPECT_EQ(load_error(path), "cannot load plugin " + path + ": invalid ELF header");
}

}  // namespace
}  // namespace kiln
