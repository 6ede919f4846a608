// FeatureDecoder and RecordDecoder: the direct writes of the common cases (raw values of the
// declared count) deliver exactly what the general path, FeatureDecoder::value(), does; a record
// decoded after another with more features does not see that record's values.

#include "kiln/data/example_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::data {
namespace example_features_test {

using ::testing::HasSubstr;

FeatureSpec spec(FeatureDtype dtype, std::vector<int64_t> shape, double scale = 1.0,
                 bool channels_first = false) {
  FeatureSpec s;
  s.dtype = dtype;
  s.shape = std::move(shape);
  s.scale = scale;
  s.channels_first = channels_first;
  return s;
}

std::string bytes_of(int64_t count, int start) {
  std::string bytes;
  for (int64_t i = 0; i < count; ++i) bytes.push_back(static_cast<char>((start + 37 * i) % 256));
  return bytes;
}

TEST(FeatureDecoder, DirectWritesDeliverWhatTheGeneralPathDoes) {
  std::map<std::string, FeatureSpec> specs = {
      {"rgb", spec(FeatureDtype::kFloat32, {2, 3, 3}, 1.0 / 255, /*channels_first=*/true)},
      {"gray", spec(FeatureDtype::kFloat32, {2, 3, 1}, 0.00392156862745098, true)},
      {"raw", spec(FeatureDtype::kUint8, {4, 2, 3}, 1.0, true)},
      {"floats", spec(FeatureDtype::kFloat32, {3}, 0.1)},
      {"ints", spec(FeatureDtype::kInt64, {2})},
      {"ints_as_floats", spec(FeatureDtype::kFloat32, {2}, 2.0)},
      {"split_bytes", spec(FeatureDtype::kFloat32, {4})},
  };
  FeatureDecoder decoder(specs, "data.train.features");
  io::Example example;
  example.features["rgb"] = io::bytes_feature({bytes_of(18, 3)});
  example.features["gray"] = io::bytes_feature({bytes_of(6, 200)});
  example.features["raw"] = io::bytes_feature({bytes_of(24, 9)});
  example.features["floats"] = io::float_feature({1.5f, -2.25f, 3.0e-7f});
  example.features["ints"] = io::int64_feature({-7, int64_t{1} << 40});
  example.features["ints_as_floats"] = io::int64_feature({3, -16777217});
  // Two strings of bytes, which only the general path joins.
  example.features["split_bytes"] = io::bytes_feature({"ab", "cd"});
  auto rows = decoder.allocate(3);
  for (auto& [name, column] : rows) column.zero_();
  decoder.decode(example, {"f", 0, 0}, 1, rows);
  for (const auto& [name, s] : specs) {
    torch::Tensor expected = decoder.value(name, &example.features.at(name), {"f", 0, 0}, name);
    EXPECT_TRUE(torch::equal(rows.at(name)[1], expected)) << name;
    EXPECT_EQ(rows.at(name)[0].abs().sum().item<double>(), 0.0) << name << ": only row 1 written";
  }
}

TEST(FeatureDecoder, TheGeneralPathStillJudgesWhatTheDirectOneDoesNotTake) {
  FeatureDecoder decoder({{"image", spec(FeatureDtype::kFloat32, {2, 2})}}, "features");
  io::Example short_one;
  short_one.features["image"] = io::bytes_feature({"abc"});
  auto rows = decoder.allocate(1);
  EXPECT_THAT(
      [&] {
        decoder.decode(short_one, {"f.tfrecord", 4, 96}, 0, rows);
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("feature \"image\"")));
}

TEST(RecordDecoder, ARecordWithoutAFeatureGetsItsDefaultNotTheRecordBeforesValue) {
  RecordSpec record;
  FeatureSpec with_default = spec(FeatureDtype::kFloat32, {2});
  with_default.default_value = -1.0;
  record.features = {{"x", with_default}, {"label", spec(FeatureDtype::kInt64, {})}};
  RecordDecoder decoder(record, "data.train.");
  io::Example full, lacking;
  full.features["x"] = io::float_feature({5.0f, 6.0f});
  full.features["label"] = io::int64_feature({1});
  lacking.features["label"] = io::int64_feature({2});
  auto rows = decoder.allocate(2);
  decoder.decode(io::encode_example(full), {"f", 0, 0}, 0, rows);
  decoder.decode(io::encode_example(lacking), {"f", 1, 40}, 1, rows);
  EXPECT_TRUE(torch::equal(rows.at("x"), torch::tensor({{5.0f, 6.0f}, {-1.0f, -1.0f}})));
  EXPECT_TRUE(torch::equal(rows.at("label"), torch::tensor({1, 2}, torch::kInt64)));
}

}  // namespace example_features_test
}  // namespace kiln::data
