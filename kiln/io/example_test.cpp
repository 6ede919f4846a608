#include "kiln/io/example.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string hex(const std::string& text) {
  std::string out;
  for (size_t i = 0; i + 1 < text.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16)));
  return out;
}

std::string with_length(const std::string& tag, const std::string& payload) {
  return hex(tag) + static_cast<char>(payload.size()) + payload;
}

// Example{features{feature{key: `key`, value: `feature_bytes`}}}, for payloads under 128 bytes.
std::string one_feature_example(const std::string& key, const std::string& feature_bytes) {
  std::string entry = with_length("0a", key) + with_length("12", feature_bytes);
  return with_length("0a", with_length("0a", entry));
}

TEST(Example, DecodesTheWorkedExampleOfTheSpec) {
  // docs/formats.md §1.2: the first record of tfrecord_lite_test.tfrecord, keys not in sorted
  // order.
  std::string record =
      hex("0a550a170a0866656174757265321"
          "20b0a090a07636869636b656e0a140a086665617475726533120812060a040fd78fbf0a110a0866656174"
          "7572653012051a030a01000a110a08666561747572653112051a030a0102");
  Example example = parse_example(record);
  ASSERT_EQ(example.features.size(), 4u);
  EXPECT_EQ(example.features["feature0"], int64_feature({0}));
  EXPECT_EQ(example.features["feature1"], int64_feature({2}));
  EXPECT_EQ(example.features["feature2"], bytes_feature({"chicken"}));
  EXPECT_EQ(example.features["feature3"], float_feature({-1.1237505674362183f}));
}

TEST(Example, EncodesAsTensorFlowDoes) {
  Example example;
  example.features["feature0"] = int64_feature({0});
  EXPECT_EQ(encode_example(example), hex("0a130a110a086665617475726530"
                                         "12051a030a0100"));
  example.features["feature0"] = float_feature({-1.1237505674362183f});
  EXPECT_EQ(encode_example(example), hex("0a160a140a086665617475726530"
                                         "120812060a040fd78fbf"));
}

TEST(Example, AcceptsUnpackedAndMixedNumericLists) {
  // FloatList: one unpacked fixed32 (0d ...) then a packed run; Int64List: unpacked varints.
  std::string floats = with_length("12", hex("0d0000803f") + with_length("0a", hex("00000040")));
  std::string ints = with_length("1a", hex("0805") + hex("08ffffffffffffffffff01"));
  EXPECT_EQ(parse_example(one_feature_example("f", floats)).features["f"],
            float_feature({1.0f, 2.0f}));
  EXPECT_EQ(parse_example(one_feature_example("i", ints)).features["i"], int64_feature({5, -1}));
}

TEST(Example, AFeatureWithNoValueIsKindNone) {
  Example example = parse_example(one_feature_example("missing", ""));
  ASSERT_EQ(example.features.count("missing"), 1u);
  EXPECT_EQ(example.features["missing"].kind, Feature::Kind::kNone);
  EXPECT_EQ(example.features["missing"].size(), 0u);
  EXPECT_STREQ(feature_kind_name(Feature::Kind::kNone), "none");
  EXPECT_EQ(parse_example(encode_example(example)).features["missing"], Feature{});
}

TEST(Example, RoundTripsWideIntegersEmptyListsAndBinaryBytes) {
  Example example;
  example.features["tract"] = int64_feature({17031080100, -1, INT64_MIN, INT64_MAX, 0});
  example.features["empty_floats"] = float_feature({});
  example.features["blob"] = bytes_feature({std::string("\0\xff\x80", 3), ""});
  example.features["z_last"] = float_feature({0.5f, -0.0f, 3e38f});
  Example back = parse_example(encode_example(example));
  EXPECT_EQ(back.features, example.features);
}

TEST(Example, SkipsUnknownFieldsAtEveryLevel) {
  std::string feature = with_length("1a", hex("0a0107") + hex("1001")) + hex("2001");
  std::string record = hex("3803") + one_feature_example("x", feature) + hex("4d01020304");
  EXPECT_EQ(parse_example(record).features["x"], int64_feature({7}));
}

TEST(Example, ADifferentKindReplacesTheValueAndTheSameKindMerges) {
  std::string merged = with_length("1a", hex("0a0101")) + with_length("1a", hex("0a0102"));
  EXPECT_EQ(parse_example(one_feature_example("m", merged)).features["m"], int64_feature({1, 2}));
  std::string replaced =
      with_length("1a", hex("0a0101")) + with_length("0a", with_length("0a", "s"));
  EXPECT_EQ(parse_example(one_feature_example("r", replaced)).features["r"], bytes_feature({"s"}));
}

TEST(SequenceExample, RoundTripsContextAndFeatureLists) {
  SequenceExample example;
  example.context["id"] = bytes_feature({"seq-1"});
  example.context["empty"] = Feature{};
  example.feature_lists["tokens"] = {int64_feature({1, 2}), int64_feature({3})};
  example.feature_lists["scores"] = {float_feature({0.25f})};
  SequenceExample back = parse_sequence_example(encode_sequence_example(example));
  EXPECT_EQ(back.context, example.context);
  EXPECT_EQ(back.feature_lists, example.feature_lists);
}

DataError parse_error(const std::string& record, const RecordLocation& where = {}) {
  try {
    parse_example(record, where);
  } catch (const DataError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed a malformed record";
  return DataError("", -1, -1, "");
}

TEST(ExampleErrors, NameTheFileRecordOffsetAndFeature) {
  std::string bad_floats = with_length("12", with_length("0a", hex("000080")));  // 3 bytes
  std::string record = one_feature_example("pixels", bad_floats);
  DataError e = parse_error(record, {"data.tfrecord", 7, 1000});
  EXPECT_EQ(e.file(), "data.tfrecord");
  EXPECT_EQ(e.record(), 7);
  EXPECT_GT(e.offset(), 1000);
  EXPECT_LT(e.offset(), 1000 + static_cast<int64_t>(record.size()));
  EXPECT_THAT(e.what(), HasSubstr("feature \"pixels\""));
  EXPECT_THAT(e.what(), HasSubstr("truncated fixed32"));
}

TEST(ExampleErrors, RejectBadWireTypesAndOverrunningLengths) {
  EXPECT_THAT(parse_error(hex("0b")).what(), HasSubstr("wire type 3"));
  EXPECT_THAT(parse_error(hex("0805")).what(), HasSubstr("field 1 of Example has wire type 0"));
  EXPECT_THAT(parse_error(hex("0a05")).what(), HasSubstr("overruns"));
  EXPECT_THAT(parse_error(hex("38ffffffffffffffffffff01")).what(), HasSubstr("varint"));
  EXPECT_THAT(parse_error(hex("00")).what(), HasSubstr("field number 0"));
}

TEST(ExampleErrors, NoTruncationOrFlippedByteCrashes) {
  Example example;
  example.features["a"] = float_feature({1, 2, 3});
  example.features["b"] = bytes_feature({"hello", "world"});
  example.features["c"] = int64_feature({-5, 1LL << 40});
  std::string record = encode_example(example);
  int errors = 0;
  for (size_t cut = 1; cut < record.size(); ++cut) {
    try {
      parse_example(record.substr(0, cut));
    } catch (const DataError& e) {
      EXPECT_LE(e.offset(), static_cast<int64_t>(cut));
      ++errors;
    }
  }
  EXPECT_EQ(errors, static_cast<int>(record.size()) - 1);  // every cut breaks the outer length
  for (size_t i = 0; i < record.size(); ++i) {
    std::string flipped = record;
    flipped[i] = static_cast<char>(flipped[i] ^ 0xff);
    try {
      parse_example(flipped);
    } catch (const DataError&) {
    }
  }
  EXPECT_THAT(parse_example(record).features["c"].ints, ElementsAre(-5, 1LL << 40));
}

}  // namespace
}  // namespace kiln::io

namespace kiln::io {
namespace {

// A pass over many records reuses one Example: each record's values replace the last one's, and
// a feature the record lacks is left without values, as a missing one reads.
TEST(Example, ParsingIntoAnExampleReplacesTheRecordBefore) {
  Example first, second, reused;
  first.features = {{"a", int64_feature({1})}, {"b", bytes_feature({"x"})}};
  second.features = {{"a", float_feature({2, 3})}};
  parse_example_into(encode_example(first), reused);
  EXPECT_EQ(reused.features.at("a"), int64_feature({1}));
  parse_example_into(encode_example(second), reused);
  EXPECT_EQ(reused.features.at("a"), float_feature({2, 3}));
  EXPECT_EQ(reused.features.at("b").kind, Feature::Kind::kNone);
  EXPECT_EQ(reused.features.at("b").size(), 0u);
  EXPECT_THROW(parse_example_into("\x0a\x05", reused, {"f.tfrecord", 3, 30}), DataError);
}

}  // namespace
}  // namespace kiln::io
