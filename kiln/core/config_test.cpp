#include "kiln/core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

Json yaml(const std::string& text) { return parse_config_text(text, "test.yaml", false); }

TEST(ConfigText, ParsesYamlMappingsListsAndFlowStyle) {
  Json tree = yaml(
      "name: fashion_cnn  # a comment\n"
      "data:\n"
      "  train: {type: fashion_mnist, split: train}\n"
      "  batch_size: 128\n"
      "metrics: [accuracy, top5]\n"
      "layers:\n"
      "  - relu\n"
      "  - {type: linear, out: 10}\n");
  EXPECT_EQ(tree["name"], "fashion_cnn");
  EXPECT_EQ(tree["data"]["train"], Json({{"type", "fashion_mnist"}, {"split", "train"}}));
  EXPECT_EQ(tree["data"]["batch_size"], 128);
  EXPECT_EQ(tree["metrics"], Json({"accuracy", "top5"}));
  EXPECT_EQ(tree["layers"][1]["out"], 10);
  // Keys keep the order they were written in.
  EXPECT_EQ(tree.begin().key(), "name");
}

TEST(ConfigText, TypesYamlScalarsByTheCoreSchema) {
  Json tree = yaml(
      "int: 42\nneg: -7\nhex: 0x1F\nfloat: 1.0e-3\nshort_float: 1e-3\nplain_float: 2.5\n"
      "yes_bool: true\nno_bool: False\nnull_word: null\ntilde: ~\nempty:\n"
      "quoted_int: \"1\"\nsingle_quoted_bool: 'true'\nquoted_null: \"null\"\n"
      "period: 2 epochs\nword: yes\ninf: .inf\n");
  EXPECT_TRUE(tree["int"].is_number_integer());
  EXPECT_EQ(tree["int"], 42);
  EXPECT_EQ(tree["neg"], -7);
  EXPECT_EQ(tree["hex"], 31);
  EXPECT_TRUE(tree["float"].is_number_float());
  EXPECT_DOUBLE_EQ(tree["float"].get<double>(), 1e-3);
  EXPECT_TRUE(tree["short_float"].is_number_float());
  EXPECT_DOUBLE_EQ(tree["short_float"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(tree["plain_float"].get<double>(), 2.5);
  EXPECT_EQ(tree["yes_bool"], true);
  EXPECT_EQ(tree["no_bool"], false);
  EXPECT_TRUE(tree["null_word"].is_null());
  EXPECT_TRUE(tree["tilde"].is_null());
  EXPECT_TRUE(tree["empty"].is_null());
  EXPECT_EQ(tree["quoted_int"], "1");
  EXPECT_EQ(tree["single_quoted_bool"], "true");
  EXPECT_EQ(tree["quoted_null"], "null");
  EXPECT_EQ(tree["period"], "2 epochs");
  EXPECT_EQ(tree["word"], "yes");  // YAML 1.2: only true/false are booleans
  EXPECT_TRUE(std::isinf(tree["inf"].get<double>()));
}

TEST(ConfigText, ParsesJsonWithComments) {
  Json tree = parse_config_text(
      "{\n"
      "  // line comment\n"
      "  \"lr\": 1e-3, /* block\n comment */ \"name\": \"x\",\n"
      "  \"layers\": [1, 2]\n"
      "}\n",
      "exp.json", true);
  EXPECT_DOUBLE_EQ(tree["lr"].get<double>(), 1e-3);
  EXPECT_EQ(tree["name"], "x");
  EXPECT_EQ(tree["layers"], Json({1, 2}));
}

TEST(ConfigText, SyntaxErrorsNameTheOrigin) {
  try {
    parse_config_text("{\"a\": }", "exp.json", true);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.origin(), "exp.json");
    EXPECT_THAT(e.what(), HasSubstr("invalid JSON"));
  }
  try {
    parse_config_text("a: [1, 2\nb: 3\n", "exp.yaml", false);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.origin(), "exp.yaml");
    EXPECT_THAT(e.what(), HasSubstr("invalid YAML at line"));
  }
}

TEST(ConfigFile, LoadsByExtensionAndRejectsOthers) {
  testing::TempDir dir;
  EXPECT_EQ(load_config_file(dir.write("a.yaml", "x: 1\n")), Json({{"x", 1}}));
  EXPECT_EQ(load_config_file(dir.write("a.yml", "x: 2\n")), Json({{"x", 2}}));
  EXPECT_EQ(load_config_file(dir.write("a.json", "// c\n{\"x\": 3}")), Json({{"x", 3}}));
  EXPECT_EQ(load_config_file(dir.write("empty.yaml", "")), Json::object());
  std::string txt = dir.write("a.txt", "x: 1\n");
  EXPECT_THROW(load_config_file(txt), ConfigError);
  std::string list = dir.write("list.yaml", "- 1\n- 2\n");
  try {
    load_config_file(list);
    ADD_FAILURE() << "a list at the top level was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.origin(), list);
  }
  EXPECT_THROW(load_config_file(dir.file("missing.yaml")), IoError);
}

TEST(DeepMerge, ObjectsMergeAndEverythingElseReplaces) {
  Json base = yaml("a: {x: 1, y: [1, 2, 3], z: {deep: 1, keep: 2}}\nb: 1\nc: [5]\n");
  deep_merge(base, yaml("a: {y: [9], z: {deep: 7}, new: n}\nb: {now: object}\nc: ~\n"));
  EXPECT_EQ(base, yaml("a: {x: 1, y: [9], z: {deep: 7, keep: 2}, new: n}\n"
                       "b: {now: object}\nc: ~\n"));
}

TEST(LoadConfig, LaterFilesDeepMergeOverEarlier) {
  testing::TempDir dir;
  std::string a = dir.write("a.yaml",
                            "name: base\ntrain: {max: 10 epochs, epochs: 3}\n"
                            "metrics: [accuracy, top5]\n");
  std::string b = dir.write("b.yaml", "train: {epochs: 5}\nmetrics: [loss]\nseed: 7\n");
  RawConfig config = load_config({a, b}, {});
  EXPECT_EQ(config.tree, yaml("name: base\ntrain: {max: 10 epochs, epochs: 5}\n"
                              "metrics: [loss]\nseed: 7\n"));
  EXPECT_EQ(config.origins.find("name"), a);
  EXPECT_EQ(config.origins.find("train.max"), a);
  EXPECT_EQ(config.origins.find("train.epochs"), b);
  EXPECT_EQ(config.origins.find("metrics[0]"), b);
  EXPECT_EQ(config.origins.find("seed"), b);
}

TEST(ToYaml, RoundTripsEveryScalarType) {
  Json tree = Json::object();
  tree["int"] = 3;
  tree["negative"] = -12;
  tree["float"] = 1e-3;
  tree["whole_float"] = 1.0;
  tree["big_float"] = 1e20;
  tree["bool"] = true;
  tree["null"] = nullptr;
  tree["string_one"] = "1";
  tree["string_true"] = "true";
  tree["string_null"] = "null";
  tree["string_float"] = "1e-3";
  tree["string_hex"] = "0x10";
  tree["string_tilde"] = "~";
  tree["empty_string"] = "";
  tree["period"] = "2 epochs";
  tree["tricky"] = "a: b # not a comment";
  tree["dash"] = "- item";
  tree["quote"] = "say \"hi\"";
  tree["multi_line"] = "line one\nline two";
  tree["key with: colon"] = "v";
  tree["list"] = {1, "2", 3.5, false, nullptr, Json::array(), Json::object()};
  tree["nested"] = {{"layers", {"relu", {{"type", "linear"}, {"out", 10}}}}};
  std::string text = to_yaml(tree);
  Json back = parse_config_text(text, "round trip", false);
  EXPECT_EQ(back, tree) << text;
  EXPECT_TRUE(back["whole_float"].is_number_float()) << text;
}

// Found by fuzz_config: a whole config that is the string "---" was written plain, and read
// back as an empty document; so was a key "--- x" at the start of a line.
TEST(ConfigText, DocumentMarkerStringsReadBackAsWritten) {
  for (const char* marker : {"---", "...", "--- x", "... y"}) {
    Json tree = marker;
    std::string text = to_yaml(tree);
    EXPECT_EQ(parse_config_text(text, "round trip", false), tree) << text;
    Json nested = {{"key", marker}, {"list", {marker}}, {marker, 1}};
    text = to_yaml(nested);
    EXPECT_EQ(parse_config_text(text, "round trip", false), nested) << text;
  }
}

// Found by fuzz_config: a key of more than 1024 characters was written as `key: value`, which
// YAML does not allow (an implicit key is at most 1024 long), and did not read back.
TEST(ConfigText, LongKeysReadBackAsWritten) {
  for (const std::string& key :
       {std::string(1100, 'k'), std::string(300, '\x01'), std::string(129, 'x') + ": y\n- z"}) {
    Json tree = {{key, {{"inner", 1}}}, {"after", key}};
    std::string text = to_yaml(tree);
    EXPECT_EQ(parse_config_text(text, "round trip", false), tree) << text;
  }
}

}  // namespace
}  // namespace kiln
