// Bad config text from issue #17's reproductions: bytes that are not UTF-8, YAML aliases that
// form a cycle or expand exponentially, duplicate keys, deep nesting, oversized text and NaN.
// Each must end in a ConfigError that says what is wrong and where, never a crash or a hang.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/core/schema.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// The message of the ConfigError parsing `text` throws.
std::string error_of(const std::string& text, bool is_json = false) {
  try {
    parse_config_text(text, is_json ? "exp.json" : "exp.yaml", is_json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string nested(const std::string& open, const std::string& close, int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += open;
  text += "1";
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(ConfigHardening, BytesThatAreNotUtf8AreNamedByLineAndColumn) {
  EXPECT_EQ(error_of("name: x\nseed: \xff\n"),
            "config error (exp.yaml): byte 0xff at line 2, column 7 (offset 14) is not UTF-8; "
            "configs must be UTF-8 text");
  EXPECT_THAT(error_of("{\"seed\": \"\xc3\"}", true), HasSubstr("byte 0xc3 at line 1, column 11"));
  // NUL made yaml-cpp read the text as UTF-32; a lone CR stayed inside plain values.
  EXPECT_THAT(error_of(std::string("<\0\0\0"
                                   "4444",
                                   8)),
              HasSubstr("byte 0x00 at line 1, column 2 (offset 1) is a control character"));
  EXPECT_THAT(error_of("a: x\r"), HasSubstr("byte 0x0d at line 1, column 5"));
  EXPECT_EQ(error_of("a: x\r\nb: [1,\t2]\r\n"), "no error");  // CRLF files and tabs are text
  RawConfig config;
  try {
    apply_override(config, "seed=\xff");
    ADD_FAILURE() << "no error for --set seed=\\xff";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(--set): byte 0xff at line 1, column 6"));
  }
}

TEST(ConfigHardening, ARecursiveAliasIsRefused) {
  EXPECT_THAT(error_of("a: &a {b: *a}\n"),
              HasSubstr("at a.b (exp.yaml): an alias at line 1 refers to a node that contains it"));
  EXPECT_THAT(error_of("x: &l [1, *l]\n"), HasSubstr("refers to a node that contains it"));
}

TEST(ConfigHardening, AliasesThatExpandExponentiallyAreRefusedAtOnce) {
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (char name = 'b'; name <= 'k'; ++name) {
    std::string list = "[";
    for (int i = 0; i < 10; ++i) list += (i ? ", *" : "*") + previous;
    laughs += std::string(1, name) + ": &" + name + " " + list + "]\n";
    previous = std::string(1, name);
  }
  ASSERT_LT(laughs.size(), 1000u);  // ten billion values in under a kilobyte
  EXPECT_THAT(error_of(laughs), HasSubstr("the document expands to more than 100000 values"));
  // Aliases used sensibly still work.
  Json tree = parse_config_text("base: &b {lr: 1}\nother: *b\n", "exp.yaml", false);
  EXPECT_EQ(tree["other"]["lr"], 1);
}

// Every value counted against the limit refused a model.yaml of 100,000 labels, in the words of
// an alias attack: only values met again through aliases count.
TEST(ConfigHardening, ALongDocumentOfItsOwnValuesIsReadWhole) {
  std::string labels = "labels: [";
  for (int i = 0; i < 150000; ++i) labels += (i ? ", l" : "l") + std::to_string(i);
  labels += "]\n";
  Json tree = parse_config_text(labels, "exp.yaml", false);
  ASSERT_EQ(tree["labels"].size(), 150000u);
  EXPECT_EQ(tree["labels"][149999], "l149999");
}

// A 16 MiB flow list of 8.4 million one-letter labels took 5.5 GB and 28 s to build in
// yaml-cpp's nodes before anything could refuse it: the parser's events are counted first.
TEST(ConfigHardening, AFileOfMillionsOfValuesIsRefusedBeforeItsNodesAreBuilt) {
  std::string labels = "labels: [a";
  for (int i = 1; i < 1000000; ++i) labels += ", a";
  labels += "]\n";
  std::string error = error_of(labels);
  EXPECT_THAT(error, HasSubstr("(exp.yaml): more than 200000 values and keys (line 1, column "));
  std::string block = "labels:\n";
  for (int i = 0; i < 300000; ++i) block += "  - b\n";
  EXPECT_THAT(error_of(block),
              HasSubstr("more than 200000 values and keys (line 199999, column 5)"));
}

TEST(ConfigHardening, DuplicateKeysNameBothLines) {
  EXPECT_EQ(error_of("seed: 1\nname: x\nseed: 2\n"),
            "config error at seed (exp.yaml): duplicate key \"seed\" (lines 1 and 3); a mapping "
            "names each key once");
  EXPECT_THAT(error_of("train:\n  max: 1\n  max: 2\n"), HasSubstr("at train.max"));
  EXPECT_THAT(error_of("{\"a\": {\"b\": 1, \"b\": 2}}", true),
              HasSubstr("invalid JSON: an object holds the key \"b\" twice"));
  // The same key in different mappings is fine.
  EXPECT_EQ(error_of("a: {x: 1}\nb: {x: 2}\n"), "no error");
  EXPECT_EQ(error_of("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}", true), "no error");
}

TEST(ConfigHardening, DeepNestingIsRefusedWithTheLimit) {
  EXPECT_THAT(error_of("a: " + nested("[", "]", 100) + "\n"),
              HasSubstr("nested more than 64 levels deep"));
  EXPECT_THAT(error_of(nested("[", "]", 100), true), HasSubstr("nested more than 64 levels deep"));
  // Far deeper than that, yaml-cpp's own guard stops the parser before the conversion runs (and
  // calls it a "bad file").
  EXPECT_THAT(error_of("a: " + nested("[", "]", 100000) + "\n"),
              HasSubstr("nested more than 64 levels deep (line 1, column "));
  EXPECT_EQ(error_of("a: " + nested("[", "]", 60) + "\n"), "no error");
}

TEST(ConfigHardening, OversizedTextIsRefusedBeforeParsing) {
  std::string huge = "a: \"" + std::string(kMaxConfigBytes, 'x') + "\"\n";
  EXPECT_THAT(error_of(huge), HasSubstr("is more than a config may hold (16777216)"));
}

struct RateOptions {
  double lr = 0.1;
  int64_t steps = 1;
  std::vector<double> mean = {0.0};
  void describe(Schema& s) {
    s.field("lr", lr, "Learning rate.");
    s.field("steps", steps, "Steps.");
    s.field("mean", mean, "Means.");
  }
};

std::string options_error(const std::string& text) {
  try {
    RateOptions options;
    read_options(options, parse_config_text(text, "exp.yaml", false), ReadContext{"", nullptr});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConfigHardening, NanIsRefusedAndShownAsWritten) {
  EXPECT_EQ(options_error("lr: .nan\n"),
            "config error at lr: expected number, got .nan (not a number)");
  EXPECT_THAT(options_error("mean: [0.5, .nan]\n"), HasSubstr("at mean[1]: expected number"));
  EXPECT_EQ(options_error("steps: .inf\n"), "config error at steps: expected integer, got .inf");
  EXPECT_EQ(options_error("lr: .inf\n"), "no error");  // a limit that never binds
}

}  // namespace
}  // namespace kiln
