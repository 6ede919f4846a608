#include "kiln/io/record_inspect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

const std::string kTestdata = KILN_TESTDATA;

std::string write_examples(const std::string& path, const std::vector<Example>& examples) {
  TfRecordWriter writer(path);
  for (const auto& e : examples) writer.write(encode_example(e));
  writer.close();
  return path;
}

TEST(InspectTfRecord, DescribesTheTensorFlowTutorialFile) {
  Json report = inspect_tfrecord(kTestdata + "/tfrecord_lite_test.tfrecord");
  EXPECT_EQ(report["records"], 42);
  EXPECT_EQ(report["compression"], "none");
  EXPECT_EQ(report["kind"], "example");
  EXPECT_EQ(report["features"]["feature2"]["type"], "bytes_list");
  EXPECT_EQ(report["features"]["feature3"]["type"], "float_list");
  EXPECT_EQ(report["features"]["feature1"]["min_len"], 1);
  EXPECT_EQ(report["features"]["feature1"]["max_len"], 1);
  EXPECT_EQ(report["first"]["feature2"], Json::array({"chicken"}));
  EXPECT_EQ(report["first"]["feature1"], Json::array({2}));
  EXPECT_NEAR(report["first"]["feature3"][0].get<double>(), -1.1237505674362183, 1e-7);
}

TEST(InspectTfRecord, DescribesTheGzippedTfxFile) {
  Json report = inspect_tfrecord(kTestdata + "/tfx_penguin_train.tfrecord.gz");
  EXPECT_EQ(report["records"], 234);
  EXPECT_EQ(report["compression"], "gzip");
  EXPECT_EQ(report["features"].size(), 5u);
  EXPECT_EQ(report["features"]["species"]["type"], "int64_list");
  EXPECT_EQ(report["first"]["species"], Json::array({0}));
}

TEST(InspectTfRecord, MissingAndEmptyFeaturesWidenTheLengthRange) {
  testing::TempDir dir;
  Example a, b;
  a.features["x"] = float_feature({1, 2, 3});
  a.features["cell"] = Feature{};  // TensorFlow's missing CSV cell
  b.features["x"] = float_feature({4});
  b.features["cell"] = int64_feature({5});
  b.features["only_b"] = bytes_feature({std::string("\xff\x00", 2)});
  Json report = inspect_tfrecord(write_examples(dir.file("f.tfrecord"), {a, b}));
  EXPECT_EQ(report["features"]["x"]["min_len"], 1);
  EXPECT_EQ(report["features"]["x"]["max_len"], 3);
  EXPECT_EQ(report["features"]["cell"]["type"], "int64_list");
  EXPECT_EQ(report["features"]["cell"]["min_len"], 0);
  EXPECT_EQ(report["features"]["only_b"]["min_len"], 0);
  EXPECT_EQ(report["features"]["only_b"]["records_with"], 1);
  EXPECT_EQ(report["first"]["cell"], Json::array());
  EXPECT_FALSE(report["first"].contains("only_b"));
}

TEST(InspectTfRecord, ShowsNonUtf8BytesAsBase64) {
  testing::TempDir dir;
  Example e;
  e.features["png"] = bytes_feature({std::string("\x89PNG", 4), "text"});
  Json report = inspect_tfrecord(write_examples(dir.file("b.tfrecord"), {e}));
  EXPECT_EQ(report["first"]["png"][0], (Json{{"b64", "iVBORw=="}}));
  EXPECT_EQ(report["first"]["png"][1], "text");
}

TEST(InspectTfRecord, RecognisesSequenceExamples) {
  testing::TempDir dir;
  SequenceExample s;
  s.context["id"] = bytes_feature({"s1"});
  s.feature_lists["tokens"] = {int64_feature({1}), int64_feature({2, 3})};
  TfRecordWriter writer(dir.file("s.tfrecord"), Compression::kZlib);
  writer.write(encode_sequence_example(s));
  writer.close();
  Json report = inspect_tfrecord(dir.file("s.tfrecord"));
  EXPECT_EQ(report["kind"], "sequence_example");
  EXPECT_EQ(report["compression"], "zlib");
  EXPECT_EQ(report["features"]["id"]["type"], "bytes_list");
  EXPECT_EQ(report["feature_lists"]["tokens"]["max_len"], 2);
  EXPECT_EQ(report["first_feature_lists"]["tokens"], Json::parse("[[1], [2, 3]]"));
}

TEST(InspectTfRecord, AMalformedRecordNamesFileRecordAndOffset) {
  testing::TempDir dir;
  std::string path = dir.file("bad.tfrecord");
  {
    TfRecordWriter writer(path);
    Example good;
    good.features["x"] = int64_feature({1});
    writer.write(encode_example(good));
    writer.write(std::string("\x0a\x05\x0a", 3));  // a Features field that overruns the record
    writer.close();
  }
  try {
    inspect_tfrecord(path);
    FAIL() << "inspected a malformed record";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.record(), 1);
    int64_t second_record = 12 + 14 + 4;            // header + 14-byte example + footer
    EXPECT_EQ(e.offset(), second_record + 12 + 2);  // the length that overruns ends at byte 2
    EXPECT_THAT(e.what(), HasSubstr("malformed tf.Example"));
  }
}

}  // namespace
}  // namespace kiln::io
