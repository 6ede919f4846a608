#include "kiln/core/json_text.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace json_text_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string error_of(const std::string& text) {
  try {
    parse_json_text(text);
    return "no error";
  } catch (const JsonTextError& e) {
    return e.what();
  }
}

TEST(JsonText, NestingDeeperThanTheLimitIsRefusedNamingWhere) {
  EXPECT_EQ(error_of(nested(kMaxJsonDepth)), "no error");
  // 30,000 levels in 60 KB: the body that overflowed the server's stack.
  EXPECT_EQ(error_of(nested(30000)),
            "nested more than 64 levels deep at line 1, column 65 (byte 64)");
  EXPECT_THAT(error_of("{\n  \"a\": " + std::string(100000, '[')),
              HasSubstr("at line 2, column 71 (byte 72)"));
  try {
    parse_json_text("{\"a\":" + nested(100));
    FAIL() << "no error";
  } catch (const JsonTextError& e) {
    EXPECT_EQ(e.byte(), 5 + 63);
  }
}

TEST(JsonText, BracketsInsideStringsDoNotCount) {
  std::string brackets(1000, '[');
  Json parsed = parse_json_text("{\"text\": \"" + brackets + "\\\"" + brackets + "\"}");
  EXPECT_EQ(parsed["text"].get<std::string>().size(), 2001u);
  // An escaped backslash ends before the quote: the string closes and the brackets count.
  EXPECT_THAT(error_of("[\"\\\\\", " + nested(100) + "]"), HasSubstr("nested more than 64"));
}

TEST(JsonText, ObjectsCountAsArraysDo) {
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "{\"a\":";
  deep += "1" + std::string(65, '}');
  EXPECT_THAT(error_of(deep), HasSubstr("nested more than 64 levels deep"));
  EXPECT_EQ(error_of(deep.substr(5, deep.size() - 6)), "no error");
}

// 100 MB of `"",` once became 3.6 GB of tree: a text of more values and keys than the limit is
// refused by a scan, before anything is built; separators inside strings do not count.
TEST(JsonText, MoreValuesAndKeysThanTheLimitAreRefusedNamingWhere) {
  // The array counts as a value: [1,2,3] holds four.
  EXPECT_EQ(json_values_exceeded_at("[1,2,3]", 4), std::string::npos);
  EXPECT_EQ(json_values_exceeded_at("[1,2,3]", 3), 4u);
  EXPECT_EQ(json_values_exceeded_at("{\"a\":1,\"b\":2}", 5), std::string::npos);
  EXPECT_EQ(json_values_exceeded_at("{\"a\":1,\"b\":2}", 4), 10u);
  EXPECT_EQ(json_values_exceeded_at("[\"a,b:c[d{\\\",\"]", 2), std::string::npos);
  std::string strings = "[" + std::string(40, ' ');
  for (int i = 0; i < 20; ++i) strings += "\"\",";
  strings += "\"\"]";
  try {
    parse_json_text(strings, kMaxJsonDepth, 10);
    ADD_FAILURE() << "20 values past a limit of 10 were taken";
  } catch (const JsonTextError& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than 10 values and keys by line 1, column"));
    EXPECT_EQ(e.byte(), 67);
  }
  EXPECT_EQ(parse_json_text(strings, kMaxJsonDepth, 22).size(), 21u);
}

TEST(JsonText, SyntaxErrorsAndHugeNumbersGiveTheParsersMessageAndOffset) {
  try {
    parse_json_text("[1, 2,");
    FAIL() << "no error";
  } catch (const JsonTextError& e) {
    EXPECT_THAT(e.what(), HasSubstr("syntax error"));
    EXPECT_THAT(e.what(), Not(HasSubstr("json.exception"))) << "the library's id tells nothing";
    EXPECT_GE(e.byte(), 5);  // the end of the text, where a value was due
    EXPECT_LE(e.byte(), 6);
  }
  EXPECT_THAT(error_of("[1e400]"), HasSubstr("1e400"));
  EXPECT_THAT(error_of("[1e400]"), Not(HasSubstr("json.exception")));
  EXPECT_EQ(error_of("[1e300]"), "no error");
}

// nlohmann's parser stops at a NUL byte as at the end: what followed it was accepted unread (an
// outside campaign's find, in preprocessing.json and in request bodies).
TEST(JsonText, ANulByteIsRefusedWhereverItIs) {
  using namespace std::string_literals;
  EXPECT_THAT(error_of("{\"a\": 1}\0garbage\xff"s),
              HasSubstr("a NUL byte at line 1, column 9 (byte 8)"));
  EXPECT_THAT(error_of("[\"a\0b\"]"s), HasSubstr("NUL byte"));
  EXPECT_EQ(error_of("[\"a\\u0000b\"]"), "no error");
}

// Readers disagree on which of two values of one key counts; kiln takes neither.
TEST(JsonText, AKeyTwiceInOneObjectIsRefusedAndTheSameKeyInTwoObjectsIsNot) {
  try {
    parse_json_text(R"({"format": "bogus", "n": {"format": 1}, "format": "kiln"})");
    FAIL() << "parsed";
  } catch (const JsonTextError& e) {
    EXPECT_STREQ(e.what(), "an object holds the key \"format\" twice");
  }
  Json parsed = parse_json_text(R"([{"a": 1, "b": {"a": 2}}, {"a": 3}])");
  EXPECT_EQ(parsed[1]["a"], 3);
  EXPECT_EQ(parsed[0]["b"]["a"], 2);
  // Past a few keys an object's keys are hashed; objects inside it keep their own.
  std::string wide = "{";
  for (int i = 0; i < 40; ++i) wide += fmt::format("\"k{}\": {{\"k{}\": {}}}, ", i, i, i);
  EXPECT_EQ(parse_json_text(wide + "\"end\": 0}").size(), 41u);
  EXPECT_THROW(parse_json_text(wide + "\"k7\": 0}"), JsonTextError);
}

// nlohmann's own tree builder added each key through the ordered object's operator[], a search of
// the keys before it: 100,000 keys (a 1.2 MB request body) took 23 s and held the REST loop. The
// parse is linear now; 100,000 keys take a few tens of milliseconds (the bound leaves room for a
// sanitizer build on a busy machine, and is far below the quadratic 23 s).
TEST(JsonText, AnObjectOfAHundredThousandKeysParsesInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) text += fmt::format("\"key{}\": {}, ", i, i);
  text += "\"last\": [1, {\"a\": true}]}";
  auto start = std::chrono::steady_clock::now();
  Json parsed = parse_json_text(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 3.0);
  ASSERT_EQ(parsed.size(), 100001u);
  auto first = parsed.begin();
  EXPECT_EQ(first.key(), "key0");  // the order the text has
  EXPECT_EQ(first.value(), 0);
  EXPECT_EQ(parsed["key99999"], 99999);
  EXPECT_EQ(parsed["last"][1]["a"], true);
  EXPECT_THROW(parse_json_text(text.substr(0, text.size() - 1) + ", \"key5\": 0}"), JsonTextError);
}

// Every kind of value lands where the text puts it, at every depth, arrays and objects mixed.
TEST(JsonText, TheTreeHoldsEveryValueWhereTheTextPutsIt) {
  const char* text =
      R"({"n": null, "t": true, "f": false, "i": -3, "u": 18446744073709551615, "d": 0.5,)"
      R"( "s": "x\u00e9", "a": [[], {}, [1, [2, {"k": [3]}]], {"e": {}}], "o": {"p": {"q": []}}})";
  Json parsed = parse_json_text(text);
  EXPECT_EQ(parsed.dump(), Json::parse(text).dump());
  EXPECT_EQ(parse_json_text("7"), 7);
  EXPECT_EQ(parse_json_text("\"top\""), "top");
  EXPECT_EQ(parse_json_text("[]"), Json::array());
}

TEST(JsonText, AFileNamesItselfAndTheOffset) {
  testing::TempDir dir;
  std::string path = dir.write("run.json", "{\"status\": " + nested(200) + "}");
  try {
    read_json_file(path);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.offset(), 11 + 63);
    EXPECT_THAT(e.what(), HasSubstr("nested more than 64 levels deep at line 1, column 75"));
  }
  EXPECT_EQ(read_json_file(dir.write("ok.json", "{\"a\": [1]}"))["a"][0], 1);
}

// What kiln writes for reading never fails on text that is not UTF-8 (a hand-edited metrics.csv's
// tag, a folder name): the bytes show as U+FFFD, and the output is JSON.
TEST(JsonText, DumpedForReadingBytesThatAreNotUtf8ShowAsReplacementCharacters) {
  Json value = {{"tag\xff", "caf\xe9"}, {"n", 1}};
  EXPECT_THROW(value.dump(), Json::type_error);
  std::string text = dump_json(value);
  EXPECT_EQ(parse_json_text(text)["n"], 1);
  EXPECT_EQ(parse_json_text(text)["tag\xef\xbf\xbd"], "caf\xef\xbf\xbd");
}

}  // namespace json_text_test
}  // namespace kiln
