// `--set path=value` overrides and the origins they leave behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

RawConfig from_yaml(const std::string& text) {
  RawConfig config;
  config.tree = parse_config_text(text, "exp.yaml", false);
  config.origins.record("", config.tree, "exp.yaml");
  return config;
}

std::string override_error(RawConfig& config, const std::string& assignment) {
  try {
    apply_override(config, assignment);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.origin(), "--set") << e.what();
    return e.what();
  }
  return "no error";
}

TEST(ConfigPath, ParsesKeysAndIndices) {
  auto steps = parse_config_path("a.b[2].c");
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(std::get<std::string>(steps[0]), "a");
  EXPECT_EQ(std::get<std::string>(steps[1]), "b");
  EXPECT_EQ(std::get<size_t>(steps[2]), 2u);
  EXPECT_EQ(std::get<std::string>(steps[3]), "c");
  EXPECT_EQ(parse_config_path("m[0][1]").size(), 3u);
  for (const char* bad : {"", "[1]", "a..b", "a.", "a[", "a[x]", "a[]", ".a", "a[-1]"})
    EXPECT_THROW(parse_config_path(bad), ConfigError) << bad;
}

TEST(Override, SetsNestedValuesParsedAsYaml) {
  RawConfig config = from_yaml("train: {max: 10 epochs}\nlayers: [{out: 1}, {out: 2}, {out: 3}]\n");
  apply_override(config, "train.max=2 epochs");
  apply_override(config, "optimizer.lr=1e-3");
  apply_override(config, "layers[2].out=64");
  apply_override(config, "metrics=[accuracy, loss]");
  apply_override(config, "train.resume=true");
  apply_override(config, "name=\"1\"");
  EXPECT_EQ(config.tree["train"]["max"], "2 epochs");
  EXPECT_TRUE(config.tree["optimizer"]["lr"].is_number_float());
  EXPECT_DOUBLE_EQ(config.tree["optimizer"]["lr"].get<double>(), 1e-3);
  EXPECT_EQ(config.tree["layers"], Json::parse(R"([{"out":1},{"out":2},{"out":64}])"));
  EXPECT_EQ(config.tree["metrics"], Json({"accuracy", "loss"}));
  EXPECT_EQ(config.tree["train"]["resume"], true);
  EXPECT_EQ(config.tree["name"], "1");
}

TEST(Override, ReplacesAWholeListElement) {
  RawConfig config = from_yaml("layers: [relu, relu]\n");
  apply_override(config, "layers[1]={type: linear, out: 10}");
  EXPECT_EQ(config.tree["layers"][1], Json({{"type", "linear"}, {"out", 10}}));
  EXPECT_EQ(config.tree["layers"][0], "relu");
}

TEST(Override, OutOfRangeIndexIsAnError) {
  RawConfig config = from_yaml("layers: [{out: 1}, {out: 2}]\n");
  std::string message = override_error(config, "layers[2].out=5");
  EXPECT_THAT(message, HasSubstr("config error at layers[2].out (--set)"));
  EXPECT_THAT(message, HasSubstr("index 2 is out of range (the list has 2 items)"));
  EXPECT_THAT(override_error(config, "missing[0]=1"), HasSubstr("out of range"));
}

TEST(Override, MalformedAssignmentsAreErrors) {
  RawConfig config = from_yaml("a: {b: 1}\n");
  EXPECT_THAT(override_error(config, "a..b=1"), HasSubstr("malformed config path"));
  EXPECT_THAT(override_error(config, "a[x]=1"), HasSubstr("malformed config path"));
  EXPECT_THAT(override_error(config, "a.b"), HasSubstr("expected PATH=VALUE"));
  EXPECT_THAT(override_error(config, "=1"), HasSubstr("expected PATH=VALUE"));
  EXPECT_THAT(override_error(config, "a.b.c=1"), HasSubstr("'c' is not inside a mapping"));
}

TEST(Override, AnOptionOfAComponentNamedAloneTurnsItIntoAMapping) {
  RawConfig config = from_yaml("optimizer: sgd\n");
  apply_override(config, "optimizer.lr=0.5");
  EXPECT_EQ(config.tree["optimizer"], Json({{"type", "sgd"}, {"lr", 0.5}}));
  apply_override(config, "optimizer.type=adam");
  EXPECT_EQ(config.tree["optimizer"]["type"], "adam");
}

TEST(Override, InvalidYamlValueNamesTheSetting) {
  RawConfig config = from_yaml("a: 1\n");
  try {
    apply_override(config, "a=[1, 2");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set a"));
    EXPECT_THAT(e.what(), HasSubstr("invalid YAML"));
  }
}

TEST(Origins, NameTheFileOrSetThatSuppliedEachValue) {
  testing::TempDir dir;
  std::string a = dir.write("a.yaml", "train: {epochs: 3, max: 10 epochs}\nmodel: {out: 1}\n");
  std::string b = dir.write("b.yaml", "train: {epochs: ten}\n");
  RawConfig config = load_config({a, b}, {"model.out=-3", "model.extra.deep=[1]"});
  EXPECT_EQ(config.origins.find("train.epochs"), b);
  EXPECT_EQ(config.origins.find("train.max"), a);
  EXPECT_EQ(config.origins.find("train"), b);
  EXPECT_EQ(config.origins.find("model.out"), "--set");
  EXPECT_EQ(config.origins.find("model.extra.deep[0]"), "--set");
  // A path below a recorded value falls back to its nearest recorded ancestor.
  EXPECT_EQ(config.origins.find("train.epochs.below[3]"), b);
  EXPECT_EQ(config.origins.find("unknown.key"), b);  // the root: the last file
  EXPECT_EQ(Origins().find("anything"), "");
}

TEST(LoadConfig, OverridesApplyAfterAllFiles) {
  testing::TempDir dir;
  std::string a = dir.write("a.yaml", "seed: 1\n");
  std::string b = dir.write("b.json", "{\"seed\": 2, \"name\": \"b\"}");
  RawConfig config = load_config({a, b}, {"seed=3"});
  EXPECT_EQ(config.tree, Json({{"seed", 3}, {"name", "b"}}));
  EXPECT_EQ(config.origins.find("seed"), "--set");
  EXPECT_EQ(config.origins.find("name"), b);
}

// Fuzzing found these (tests/fuzz/regressions/fuzz_config_override, fuzz_config): an index past
// what stoul holds, and a JSON number past what a double holds, escaped as std exceptions.
TEST(Override, AnIndexOrNumberOutOfRangeIsAConfigError) {
  RawConfig config;
  config.tree = Json::parse(R"({"model": {"hidden": [1, 2]}})");
  EXPECT_THROW(apply_override(config, "model.hidden[99999999999999999999]=1"), ConfigError);
  EXPECT_THROW(parse_config_text(R"({"lr": 1e400})", "exp.json", true), ConfigError);
}

// And this: an unsigned JSON integer past 2^63 - 1 read back from the saved YAML as a float.
TEST(ConfigText, LargeUnsignedIntegersSurviveTheSavedYaml) {
  Json tree = parse_config_text(R"({"a": 18446744073709551615})", "exp.json", true);
  Json back = parse_config_text(to_yaml(tree), "config.yaml", false);
  EXPECT_EQ(back, tree);
  EXPECT_TRUE(back["a"].is_number_unsigned());
}

}  // namespace
}  // namespace kiln
