// The summary's rows, parameter counts (trainable and frozen) and multiply-accumulates, counted
// by hand for small models.

#include "kiln/models/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/components.h"

namespace kiln::models {
namespace summary_test {

using ::testing::HasSubstr;

std::shared_ptr<Model> build(const std::string& config, const Shape& input) {
  return build_model(read_spec("model", config), input);
}

const SummaryRow& row(const ModelSummary& summary, const std::string& path) {
  for (const auto& r : summary.rows)
    if (r.path == path) return r;
  throw std::runtime_error("no row " + path);
}

TEST(Summary, RowsHaveTypesShapesAndCounts) {
  auto model = build(
      "{type: sequential, layers: [{type: conv2d, out: 4, kernel: 3, padding: valid}, relu, "
      "flatten, {type: linear, out: 5}]}",
      {2, 6, 6});
  ModelSummary summary = summarize(*model, {2, 6, 6});
  const SummaryRow& conv = row(summary, "layers.0");
  EXPECT_EQ(conv.type, "Conv2d");
  EXPECT_EQ(conv.depth, 2);
  EXPECT_EQ(conv.outputs, std::vector<Shape>{Shape({4, 4, 4})});
  EXPECT_EQ(conv.trainable, 4 * 2 * 9 + 4);
  EXPECT_EQ(row(summary, "layers.2").outputs, std::vector<Shape>{Shape{64}});
  EXPECT_EQ(row(summary, "").outputs, std::vector<Shape>{Shape{5}});
  // conv: 64 outputs x 18 products; linear: 5 x 64.
  EXPECT_EQ(summary.multiply_accumulates, 64 * 18 + 5 * 64);
  EXPECT_EQ(summary.trainable, 76 + 325);
  EXPECT_EQ(summary.frozen, 0);
}

TEST(Summary, FrozenParametersAreCountedApart) {
  auto model = build("{type: mlp, num_classes: 2, hidden: [3]}", {4});
  model->named_parameters()["layers.1.weight"].set_requires_grad(false);
  ModelSummary summary = summarize(*model, {4});
  EXPECT_EQ(summary.frozen, 12);
  EXPECT_EQ(summary.trainable, 3 + 8);
  EXPECT_EQ(row(summary, "layers.1").frozen, 12);
  EXPECT_THAT(format_summary(summary), HasSubstr("parameters: 23 (11 trainable, 12 frozen)"));
}

TEST(Summary, RecurrentAndAttentionCountTheirProducts) {
  auto model = build(
      "{type: sequential, layers: [{type: lstm, hidden: 3, output: sequence}, "
      "{type: multihead_attention, heads: 1}]}",
      {5, 2});
  ModelSummary summary = summarize(*model, {5, 2});
  int64_t lstm = 5 * (12 * 2 + 12 * 3);               // steps x (W_ih + W_hh)
  int64_t attention = 3 * 5 * 3 * 3 + 2 * 5 * 5 * 3;  // projections, the two products
  int64_t out_proj = 5 * 3 * 3;
  EXPECT_EQ(summary.multiply_accumulates, lstm + attention + out_proj);
}

TEST(Summary, DepthLimitsTheRowsAndTheModeIsRestored) {
  auto model = build("{type: resnet, depth: 20}", {3, 8, 8});
  model->train();
  ModelSummary summary = summarize(*model, {3, 8, 8});
  EXPECT_TRUE(model->is_training());
  std::string shallow = format_summary(summary, 1);
  EXPECT_THAT(shallow, HasSubstr("layer3"));
  EXPECT_THAT(shallow, ::testing::Not(HasSubstr("layer3.0")));
  EXPECT_THAT(format_summary(summary), HasSubstr("layer3.0.downsample.0"));
}

TEST(Summary, ThousandsAreSeparated) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(11689512), "11,689,512");
}

}  // namespace summary_test
}  // namespace kiln::models
