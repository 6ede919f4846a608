// End-to-end: examples/custom_model builds against the installed kiln package, as a user's
// project would, and its network trains both as a plugin of the installed `kiln` and inside the
// user's own executable. Building the example compiles two LibTorch files: about a minute.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string shell_quoted(const std::string& text) { return "'" + text + "'"; }

class CustomModel : public ::testing::Test {
 protected:
  // Install and build once for every test here.
  static void SetUpTestSuite() {
    dir_ = std::make_unique<testing::TempDir>();
    std::string cmake = shell_quoted(KILN_CMAKE_COMMAND);
    std::string prefix = dir_->file("prefix"), build = dir_->file("build");
    setup_ = testing::run_command(cmake + " --install " + shell_quoted(KILN_BUILD_DIR) +
                                  " --prefix " + shell_quoted(prefix) + " 2>&1");
    if (setup_.exit_code != 0) return;
    std::string launcher = std::string(KILN_CCACHE).empty()
                               ? ""
                               : " -DCMAKE_CXX_COMPILER_LAUNCHER=" + shell_quoted(KILN_CCACHE);
    setup_ = testing::run_command(
        cmake + " -S " + shell_quoted(example_dir()) + " -B " + shell_quoted(build) + " -G " +
        shell_quoted(KILN_CMAKE_GENERATOR) +
        " -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=" + shell_quoted(prefix) + launcher +
        " 2>&1 && " + cmake + " --build " + shell_quoted(build) + " 2>&1");
  }
  static void TearDownTestSuite() { dir_.reset(); }

  void SetUp() override { ASSERT_EQ(setup_.exit_code, 0) << setup_.out; }

  static std::string example_dir() {
    return std::string(KILN_SOURCE_DIR) + "/examples/custom_model";
  }
  static std::string installed_kiln() { return shell_quoted(dir_->file("prefix/bin/kiln")); }
  static std::string plugin() { return shell_quoted(dir_->file("build/libgated_mlp.so")); }
  static std::string own_executable() { return shell_quoted(dir_->file("build/my_kiln")); }
  static std::string train_args() {
    return " train " + shell_quoted(example_dir() + "/config.yaml") + " --runs-root " +
           shell_quoted(dir_->file("runs"));
  }

  static std::unique_ptr<testing::TempDir> dir_;
  static testing::CommandResult setup_;
};

std::unique_ptr<testing::TempDir> CustomModel::dir_;
testing::CommandResult CustomModel::setup_;

// Validation accuracy well above chance (0.25 for 4 classes) shows the network really trained.
void expect_trained(const testing::CommandResult& run) {
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  size_t at = run.out.rfind("val/accuracy ");
  ASSERT_NE(at, std::string::npos) << run.out;
  EXPECT_GT(std::stod(run.out.substr(at + 13)), 0.6) << run.out;
}

// One test, since ctest runs each test in its own process and the build is the slow part.
TEST_F(CustomModel, BuildsFromThePackageAndTrainsAsPluginAndAsOwnExecutable) {
  {
    SCOPED_TRACE("the plugin's registrations appear in kiln list");
    auto without = testing::run_command(installed_kiln() + " list model");
    ASSERT_EQ(without.exit_code, 0) << without.err;
    EXPECT_THAT(without.out, Not(HasSubstr("gated_mlp")));
    auto with = testing::run_command(installed_kiln() + " --plugin " + plugin() + " list model");
    ASSERT_EQ(with.exit_code, 0) << with.err;
    EXPECT_THAT(with.out, HasSubstr("gated_mlp\n      Example plugin network"));
    EXPECT_THAT(with.out, HasSubstr("hidden           integer = 64"));
    EXPECT_THAT(with.out, HasSubstr("resnet")) << "kiln's own networks are still there";
  }
  {
    SCOPED_TRACE("the installed kiln trains the plugin's network");
    // --plugin between the subcommand and its positional: it takes one library, not the config.
    expect_trained(testing::run_command(installed_kiln() + " train --plugin " + plugin() +
                                        train_args().substr(6)));
  }
  {
    SCOPED_TRACE("the user's own executable trains it, with all of kiln linked in");
    expect_trained(testing::run_command(own_executable() + train_args()));
    auto listed = testing::run_command(own_executable() + " list model");
    EXPECT_THAT(listed.out, HasSubstr("gated_mlp"));
    EXPECT_THAT(listed.out, HasSubstr("mobilenet_v2")) << "the whole kiln archive is linked";
  }
  {
    SCOPED_TRACE("a plugin registering a taken name is refused");
    // my_kiln has gated_mlp built in, so loading the plugin registers it a second time.
    auto run = testing::run_command(own_executable() + " --plugin " + plugin() + " list model");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_THAT(run.err, HasSubstr(dir_->file("build/libgated_mlp.so") +
                                   ": duplicate model registration \"gated_mlp\""));
  }
}

}  // namespace
}  // namespace kiln
