// End-to-end: `kiln predict` over the file kinds a model's data came in. A model trained on CSV
// reads CSV files by its data's columns and one trained on TFRecord files reads TFRecord files
// with its feature spec, both without the label; each gives what the same examples as JSON lines
// give. A file of a kind the model's data was not is refused, saying what to give instead.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "kiln/core/json.h"
#include "kiln/io/example.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace predict_files_e2e_test {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// The points every test predicts, as JSON lines.
const std::vector<std::pair<double, double>> kPoints = {{3, 1}, {-3, -1}, {0.5, 0.25}, {-0.5, 2}};

std::string points_jsonl() {
  std::string lines;
  for (auto [a, b] : kPoints) lines += Json({a, b}).dump() + "\n";
  return lines;
}

// `kiln predict MODEL --input FILE`'s lines, expecting success.
std::vector<Json> predict(const std::string& model, const std::string& input) {
  auto run = testing::run_command(kiln("predict " + model + " --input " + input));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return testing::json_lines(run.out);
}

void expect_same(const std::vector<Json>& got, const std::vector<Json>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]["class_ids"], want[i]["class_ids"]) << i;
    for (size_t k = 0; k < want[i]["probabilities"].size(); ++k)
      EXPECT_NEAR(got[i]["probabilities"][k].get<double>(),
                  want[i]["probabilities"][k].get<double>(), 1e-6);
  }
}

TEST(PredictFiles, CsvFilesAreReadAsTheTrainingDataWasWithOrWithoutTheLabel) {
  testing::TempDir dir;
  testing::train_and_export_binary(KILN_BINARY, dir);
  std::string model = dir.file("models/binary");
  std::vector<Json> want = predict(model, dir.write("points.jsonl", points_jsonl()));
  std::string with_label = "a,b,label\n", without = "a,b\n";
  for (auto [a, b] : kPoints) {
    with_label += std::to_string(a) + "," + std::to_string(b) + ",1\n";
    without += std::to_string(a) + "," + std::to_string(b) + "\n";
  }
  expect_same(predict(model, dir.write("labelled.csv", with_label)), want);
  expect_same(predict(model, dir.write("unlabelled.csv", without)), want);

  auto bad = testing::run_command(
      kiln("predict " + model + " --input " + dir.write("bad.csv", "a,b\n1,x\n")));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.csv, record 0, byte offset 4"));
  EXPECT_THAT(bad.err, HasSubstr("column \"b\": \"x\" is not a number"));
  auto tfrecord =
      testing::run_command(kiln("predict " + model + " --input " + dir.write("x.tfrecord", "")));
  EXPECT_NE(tfrecord.exit_code, 0);
  EXPECT_THAT(tfrecord.err, HasSubstr("the model was trained on `csv` data"));
}

// Records of `x` (two floats) and, when `labelled`, `label`.
std::string write_records(const testing::TempDir& dir, const std::string& name, bool labelled) {
  io::TfRecordWriter writer(dir.file(name));
  for (int i = 0; i < 60; ++i) {
    auto [a, b] = kPoints[size_t(i) % kPoints.size()];
    io::Example example;
    example.features["x"] = io::float_feature({float(a + i % 3), float(b)});
    if (labelled) example.features["label"] = io::int64_feature({a + i % 3 + b > 0});
    writer.write(io::encode_example(example));
  }
  writer.close();
  return dir.file(name);
}

// A line nested 100,000 deep (it overflowed the stack once) is refused naming the file and line,
// and so is a model.yaml that is a link to /dev/zero (it was read until memory ran out).
TEST(PredictFiles, ADeeplyNestedLineAndADeviceForAFileAreDataErrors) {
  testing::TempDir dir;
  testing::train_and_export_binary(KILN_BINARY, dir);
  std::string model = dir.file("models/binary");
  std::string deep = "[1, 2]\n" + std::string(100000, '[') + std::string(100000, ']') + "\n";
  auto nested =
      testing::run_command(kiln("predict " + model + " --input " + dir.write("deep.jsonl", deep)));
  EXPECT_EQ(nested.exit_code, 1) << nested.err;
  EXPECT_THAT(nested.err, HasSubstr("deep.jsonl, record 2: line 2: the request body is not JSON: "
                                    "nested more than 64 levels deep"));

  std::string version;
  for (const auto& entry : std::filesystem::directory_iterator(model))
    if (entry.is_directory()) version = entry.path().string();
  ASSERT_FALSE(version.empty());
  std::filesystem::remove(version + "/model.yaml");
  std::filesystem::create_symlink("/dev/zero", version + "/model.yaml");
  auto device = testing::run_command(
      kiln("predict " + model + " --input " + dir.write("points.jsonl", points_jsonl())));
  EXPECT_EQ(device.exit_code, 1) << device.err;
  EXPECT_THAT(device.err, HasSubstr("model.yaml: is not a regular file"));
}

TEST(PredictFiles, TfRecordFilesAreReadWithTheTrainingFeatureSpecWithoutLabels) {
  testing::TempDir dir;
  std::string train = write_records(dir, "train.tfrecord", true);
  std::string config = dir.write(
      "records.yaml",
      "version: 1\nname: records\nseed: 1\n"
      "data:\n  train: {type: tfrecord, files: [" +
          train +
          "], input: x, target: label, features: {x: {shape: [2]}, label: {dtype: int64}}}\n"
          "  batch_size: 20\nmodel: {type: mlp, num_classes: 2, hidden: [8]}\n"
          "optimizer: {type: sgd, lr: 0.1}\ntrain: {max: 6 steps, monitor: train/loss}\n");
  auto trained = testing::run_command(kiln("train " + config + " --runs-root " + dir.file("runs")));
  ASSERT_EQ(trained.exit_code, 0) << trained.out << trained.err;
  auto exported = testing::run_command(
      kiln("export " + testing::run_dir_of(trained.out) + " --to " + dir.file("models")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string model = dir.file("models/records");

  std::string lines;
  for (int i = 0; i < 60; ++i) {
    auto [a, b] = kPoints[size_t(i) % kPoints.size()];
    lines += Json({a + i % 3, b}).dump() + "\n";
  }
  std::vector<Json> want = predict(model, dir.write("x.jsonl", lines));
  ASSERT_EQ(want.size(), 60u);
  expect_same(predict(model, write_records(dir, "unlabelled.tfrecord", false)), want);
  expect_same(predict(testing::run_dir_of(trained.out) + " --checkpoint last",
                      write_records(dir, "again.tfrecord", true)),
              want);

  auto csv = testing::run_command(
      kiln("predict " + model + " --input " + dir.write("x.csv", "a,b\n1,2\n")));
  EXPECT_NE(csv.exit_code, 0);
  EXPECT_THAT(csv.err, HasSubstr("the model was trained on `tfrecord` data"));
}

}  // namespace predict_files_e2e_test
}  // namespace kiln
