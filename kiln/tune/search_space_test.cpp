// tune.space: each parameter read with its distribution and condition, applied to a config in the
// order written; a bad range, a condition on no choice and a malformed path are config errors
// naming the parameter.

#include "kiln/tune/search_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/error.h"

namespace kiln::tune {
namespace search_space_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

SearchSpace space_of(const std::string& yaml) {
  return SearchSpace::read(parse_config_text(yaml, "tune.yaml", false), {"tune.space", nullptr});
}

std::string error_of(const std::string& yaml) {
  try {
    space_of(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const char* kSpace = R"(
optimizer: {type: choice, values: [{type: adam, lr: 0.001}, {type: sgd, lr: 0.1}]}
optimizer.momentum: {type: uniform, low: 0.5, high: 0.99, when: {optimizer: sgd}}
optimizer.weight_decay: {type: loguniform, low: 1.0e-6, high: 1.0e-2}
model.layers[0].out: {type: int, low: 16, high: 256, log: true}
data.batch_size: {type: int, low: 32, high: 256, step: 32}
)";

TEST(SearchSpace, AppliesTheValuesInTheOrderWrittenAndOnlyWhereTheirConditionHolds) {
  SearchSpace space = space_of(kSpace);
  ASSERT_EQ(space.parameters().size(), 5u);
  Json values = {{"optimizer", {{"type", "sgd"}, {"lr", 0.1}}},
                 {"optimizer.momentum", 0.9},
                 {"optimizer.weight_decay", 1e-4},
                 {"model.layers[0].out", 64},
                 {"data.batch_size", 96}};
  std::optional<Assignment> assignment = space.assignment_of(values);
  ASSERT_TRUE(assignment);
  EXPECT_NEAR(assignment->at("optimizer.weight_decay"), std::log(1e-4), 1e-12);
  EXPECT_EQ(space.values(*assignment), values);
  RawConfig config;
  config.tree = parse_config_text("optimizer: adam\nmodel: {layers: [{type: linear, out: 8}]}\n",
                                  "base.yaml", false);
  space.apply(*assignment, config, "trial 3");
  EXPECT_EQ(config.tree["optimizer"],
            Json({{"type", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 1e-4}}));
  EXPECT_EQ(config.tree["model"]["layers"][0]["out"], 64);
  EXPECT_EQ(config.tree["data"]["batch_size"], 96);
  EXPECT_EQ(config.origins.find("optimizer.momentum"), "trial 3");
  // With adam the momentum does not apply: giving it, or not giving a value that applies, is no
  // assignment of the space.
  values["optimizer"] = {{"type", "adam"}, {"lr", 0.001}};
  EXPECT_FALSE(space.assignment_of(values));
  values.erase("optimizer.momentum");
  EXPECT_TRUE(space.assignment_of(values));
  values.erase("data.batch_size");
  EXPECT_FALSE(space.assignment_of(values));
  values["data.batch_size"] = 100;  // not on a step of 32
  EXPECT_FALSE(space.assignment_of(values));
}

TEST(SearchSpace, GroupsParametersByTheirCondition) {
  SearchSpace space = space_of(kSpace);
  auto groups = space.groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].size(), 4u);
  EXPECT_EQ(groups[1].size(), 1u);
  EXPECT_EQ(groups[1][0]->name, "optimizer.momentum");
}

TEST(SearchSpace, IntsSnapToTheirStepsAndReachTheirEnds) {
  SearchSpace space = space_of("b: {type: int, low: 32, high: 250, step: 32}\n");
  const Distribution& d = *space.at("b").distribution;
  EXPECT_EQ(d.value(d.low()), 32);
  EXPECT_EQ(d.value(d.high()), 224);  // the last step at or below 250
  EXPECT_EQ(d.value(70), 64);
  EXPECT_EQ(d.grid(100).size(), 7u);
  EXPECT_EQ(d.grid(3), (std::vector<double>{32, 128, 224}));
  SearchSpace log = space_of("w: {type: int, low: 1, high: 1000, log: true}\n");
  const Distribution& w = *log.at("w").distribution;
  EXPECT_EQ(w.value(w.low()), 1);
  EXPECT_EQ(w.value(w.high()), 1000);
  EXPECT_EQ(w.value(std::log(31.6)), 32);
}

TEST(SearchSpace, BadRangesAndConditionsNameTheParameter) {
  EXPECT_THAT(error_of("optimizer.lr: {type: uniform, low: 0.5, high: 0.1}\n"),
              AllOf(HasSubstr("tune.space.optimizer.lr.high"), HasSubstr("must be above low")));
  EXPECT_THAT(error_of("optimizer.lr: {type: loguniform, low: 0, high: 0.1}\n"),
              AllOf(HasSubstr("tune.space.optimizer.lr.low"), HasSubstr("above 0")));
  EXPECT_THAT(error_of("w: {type: int, low: 0, high: 8, log: true}\n"), HasSubstr("1 or more"));
  EXPECT_THAT(error_of("w: {type: normal}\n"),
              AllOf(HasSubstr("tune.space.w"), HasSubstr("choice, int, loguniform, uniform")));
  EXPECT_THAT(error_of("w: {type: uniform, low: 0, hight: 1}\n"), HasSubstr("\"hight\""));
  EXPECT_THAT(error_of("a: {type: choice, values: [1]}\n"), HasSubstr("two values or more"));
  EXPECT_THAT(error_of("a: {type: choice, values: [1, 2, 1]}\n"), HasSubstr("repeats values[0]"));
  EXPECT_THAT(error_of("a..b: {type: uniform, low: 0, high: 1}\n"),
              HasSubstr("malformed config path"));
  EXPECT_THAT(error_of("m: {type: uniform, low: 0, high: 1, when: {o: sgd}}\n"),
              AllOf(HasSubstr("tune.space.m.when"), HasSubstr("\"o\" is not a choice written "
                                                              "above")));
  EXPECT_THAT(error_of("o: {type: choice, values: [adam, sgd]}\n"
                       "m: {type: uniform, low: 0, high: 1, when: {o: rmsprop}}\n"),
              HasSubstr("\"rmsprop\" is none of the values of the choice o"));
  EXPECT_THAT(error_of("[1, 2]"), HasSubstr("expected a mapping of config paths"));
  // A bound left out once defaulted to 0 or 1 and searched a range nobody meant.
  EXPECT_THAT(error_of("lr: {type: uniform, low: 0.5}\n"), HasSubstr("tune.space.lr.high"));
  EXPECT_THAT(error_of("lr: {type: loguniform, high: 0.5}\n"), HasSubstr("tune.space.lr.low"));
  EXPECT_THAT(error_of("n: {type: int, low: 2}\n"), HasSubstr("tune.space.n.high"));
}

TEST(SearchSpace, WritesBackWhatItRead) {
  SearchSpace space = space_of(kSpace);
  Json written = OptionTraits<SearchSpace>::write(space);
  EXPECT_EQ(written["optimizer.momentum"]["when"], Json({{"optimizer", "sgd"}}));
  EXPECT_EQ(written["data.batch_size"]["step"], 32);
  SearchSpace again = SearchSpace::read(written, {"tune.space", nullptr});
  EXPECT_EQ(OptionTraits<SearchSpace>::write(again), written);
}

}  // namespace search_space_test
}  // namespace kiln::tune
