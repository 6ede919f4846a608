// The command line of a trial of a program: its values in place of {NAME}, an argument of an
// unused parameter left out, and the mistakes check_command_line names before any trial.

#include "kiln/tune/command_line.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::tune {
namespace command_line_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

SearchSpace space() {
  return SearchSpace::read(Json::parse(R"({
      "lr": {"type": "loguniform", "low": 0.001, "high": 0.1},
      "optimizer": {"type": "choice", "values": ["sgd", "adam"]},
      "momentum": {"type": "uniform", "low": 0, "high": 1, "when": {"optimizer": "sgd"}},
      "layers": {"type": "int", "low": 1, "high": 4}})"),
                           ReadContext{"tune.space"});
}

TEST(CommandLine, ValuesTakeThePlaceOfTheirNames) {
  SearchSpace s = space();
  std::optional<Assignment> sgd =
      s.assignment_of(Json::parse(R"({"lr": 0.01, "optimizer": "sgd", "momentum": 0.5,
                                      "layers": 3})"));
  ASSERT_TRUE(sgd);
  std::vector<std::string> command = {"python3",
                                      "train.py",
                                      "--lr",
                                      "{lr}",
                                      "--opt={optimizer}",
                                      "--momentum={momentum}",
                                      "{layers}",
                                      "{trial}:{trial_dir}",
                                      "{{literal}}"};
  EXPECT_THAT(trial_command_line(command, s, *sgd, 7, "runs/s/trial-0007"),
              ElementsAre("python3", "train.py", "--lr", "0.01", "--opt=sgd", "--momentum=0.5", "3",
                          "7:runs/s/trial-0007", "{literal}"));
  std::optional<Assignment> adam =
      s.assignment_of(Json::parse(R"({"lr": 0.01, "optimizer": "adam", "layers": 1})"));
  ASSERT_TRUE(adam);
  // Momentum does not apply to adam: its argument is left out, not given empty.
  EXPECT_THAT(
      trial_command_line(command, s, *adam, 0, "t"),
      ElementsAre("python3", "train.py", "--lr", "0.01", "--opt=adam", "1", "0:t", "{literal}"));
}

TEST(CommandLine, APlaceholderNamingNoParameterIsAConfigErrorAtItsArgument) {
  SearchSpace s = space();
  check_command_line({"python3", "t.py", "{lr}", "x{{y}}"}, s);
  auto refused = [&](std::vector<std::string> command, const char* path, const char* why) {
    EXPECT_THAT([&] { check_command_line(command, s); },
                ThrowsMessage<ConfigError>(AllOf(HasSubstr(path), HasSubstr(why))));
  };
  refused({"python3", "--lr={learning_rate}"}, "tune.command[1]",
          "{learning_rate} names no parameter; it may be {trial}, {trial_dir}, {lr}");
  refused({"python3", "a", "{lr"}, "tune.command[2]", "is not closed (write {{ for one)");
  refused({"python3", "lr}"}, "tune.command[1]", "closes no '{' (write }} for one)");
  refused({"{lr}", "x"}, "tune.command[0]", "is the program each trial runs");
  refused({"", "x"}, "tune.command[0]", "is the program each trial runs");
}

// A parameter named `trial` was accepted, and {trial} then gave the trial's number, never its
// value: refused where the parameter is named.
TEST(CommandLine, AParameterNamedAfterAPlaceholderIsAConfigError) {
  for (const char* name : {"trial", "trial_dir"}) {
    SearchSpace s = SearchSpace::read(
        Json::parse(fmt::format(R"({{"{}": {{"type": "int", "low": 1, "high": 4}}}})", name)),
        ReadContext{"tune.space"});
    EXPECT_THAT(
        [&] {
          check_command_line({"python3", "t.py", "--x"}, s);
        },
        ThrowsMessage<ConfigError>(AllOf(HasSubstr(std::string("tune.space.") + name),
                                         HasSubstr("name the parameter otherwise"))));
  }
}

}  // namespace command_line_test
}  // namespace kiln::tune
