// The real files of tests/data, written by TensorFlow, TFX and TensorBoard, against the
// decoded descriptions beside them (`<file>.expected.json`).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "kiln/core/json.h"
#include "kiln/io/example.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/tfrecord.h"

namespace kiln::io {
namespace {

const std::string kTestdata = KILN_TESTDATA;

Json expected_json(const std::string& name) {
  return Json::parse(read_file_bytes(kTestdata + "/" + name + ".expected.json"));
}

// The first values of a feature as JSON, the way the expected files list them.
Json head_values(const Feature& feature, size_t count) {
  Json values = Json::array();
  for (size_t i = 0; i < std::min(count, feature.size()); ++i) {
    if (feature.kind == Feature::Kind::kBytes) values.push_back(feature.bytes[i]);
    if (feature.kind == Feature::Kind::kFloat) values.push_back(double(feature.floats[i]));
    if (feature.kind == Feature::Kind::kInt64) values.push_back(feature.ints[i]);
  }
  return values;
}

struct SeenFeature {
  std::set<std::string> kinds;
  std::set<size_t> counts;
};

void check_example_file(const std::string& name) {
  SCOPED_TRACE(name);
  Json expected = expected_json(name);
  TfRecordReader reader(kTestdata + "/" + name);
  std::map<std::string, SeenFeature> seen;
  std::string record;
  std::vector<Example> examples;
  while (reader.next(record)) {
    examples.push_back(parse_example(record, {name, reader.record_index() - 1, -1}));
    for (const auto& [key, feature] : examples.back().features) {
      seen[key].kinds.insert(feature_kind_name(feature.kind));
      seen[key].counts.insert(feature.size());
    }
  }
  ASSERT_EQ(examples.size(), expected["num_records"].get<size_t>());
  ASSERT_EQ(seen.size(), expected["features"].size());
  for (const auto& [key, description] : expected["features"].items()) {
    EXPECT_EQ(seen[key].kinds, description["kind"].get<std::set<std::string>>()) << key;
    EXPECT_EQ(seen[key].counts, description["value_counts_seen"].get<std::set<size_t>>()) << key;
  }
  for (const auto& [key, description] : expected["first_record"].items()) {
    const Feature& feature = examples[0].features.at(key);
    EXPECT_EQ(feature_kind_name(feature.kind), description["kind"]) << key;
    EXPECT_EQ(feature.size(), description["num_values"].get<size_t>()) << key;
    const Json& head = description["values_head"];
    EXPECT_EQ(head_values(feature, head.size()), head) << key;
  }
}

TEST(TfRecordTestdata, TheTensorFlowTutorialFileDecodesAsDescribed) {
  check_example_file("tfrecord_lite_test.tfrecord");
}

TEST(TfRecordTestdata, TheGzippedTfxFileDecodesAsDescribed) {
  check_example_file("tfx_penguin_train.tfrecord.gz");
}

TEST(TfRecordTestdata, TheTutorialInvariantHoldsForEveryRecord) {
  // feature2 is the name of animal number feature1 (docs/formats.md, the file's provenance).
  const std::vector<std::string> animals = {"cat", "dog", "chicken", "horse", "goat"};
  TfRecordReader reader(kTestdata + "/tfrecord_lite_test.tfrecord");
  std::string record;
  while (reader.next(record)) {
    Example example = parse_example(record);
    int64_t index = example.features.at("feature1").ints.at(0);
    ASSERT_GE(index, 0);
    ASSERT_LT(index, 5);
    EXPECT_EQ(example.features.at("feature2").bytes.at(0), animals[size_t(index)]);
  }
}

TEST(TfRecordTestdata, TensorBoardEventFilesAreTfRecordsToo) {
  for (const char* name :
       {"tf2_scalars.tfevents", "tensorboard_rustboard_scalar_accuracy.tfevents"}) {
    Json expected = expected_json(name);
    TfRecordReader reader(kTestdata + "/" + name);
    std::string record;
    int64_t count = 0;
    while (reader.next(record)) ++count;
    EXPECT_EQ(count, expected["num_records"].get<int64_t>()) << name;
    EXPECT_EQ(reader.offset(), expected["file_bytes"].get<int64_t>()) << name;
  }
}

}  // namespace
}  // namespace kiln::io
