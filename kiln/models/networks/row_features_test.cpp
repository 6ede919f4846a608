// The tabular models (linear, dnn, wide_deep) against hand-computed outputs: what each reads of
// the input row, how category indices are weighted and embedded, and the errors a layout that
// does not fit gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/models/model.h"
#include "kiln/models/networks/row_features.h"
#include "tests/support/components.h"

namespace kiln::models {
namespace row_features_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

// wide = [x0, x1, c], c an index of 3; deep = [x3, d], d an index of 4 embedded in 2.
Inputs wide_and_deep(int64_t deep_embedding = 2) {
  return {{5}, {{{"wide", 0, 3}, {"deep", 3, 2}}, {{"c", 2, 3, 0}, {"d", 4, 4, deep_embedding}}}};
}

std::shared_ptr<Model> build(const std::string& config, const Inputs& input) {
  return build_model(read_spec("model", config), input);
}

torch::Tensor parameter(Model& model, const std::string& name) {
  return model.named_parameters(true)[name];
}

TEST(RowPart, SplitsAPartIntoNumbersAndIndices) {
  RowPart deep = row_part(wide_and_deep(), "deep", "deep");
  EXPECT_EQ(deep.numbers, std::vector<int64_t>{3});
  ASSERT_EQ(deep.indices.size(), 1u);
  EXPECT_EQ(deep.indices[0].column, "d");
  RowPart whole = row_part(wide_and_deep(), "", "input");
  EXPECT_EQ(whole.numbers, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(whole.indices.size(), 2u);
  // Data without a layout: every element of the flattened example is a number.
  EXPECT_EQ(row_part(Inputs({2, 2}), "", "input").numbers, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(LinearModel, WeighsEachNumberAndEachCategory) {
  auto model = build("{type: linear, num_classes: 1, input: wide}", wide_and_deep());
  torch::NoGradGuard no_grad;
  parameter(*model, "linear.numbers.weight").copy_(torch::tensor({{2.0f, -1.0f}}));
  parameter(*model, "linear.features.embedding0.weight")
      .copy_(torch::tensor({{10.f}, {20.f}, {30.f}}));
  parameter(*model, "linear.bias").fill_(0.5f);
  // Row 0: 2*1 - 1*3 + w[c=2] + 0.5 = 29.5; row 1: c = -1 (no bucket) weighs nothing.
  torch::Tensor rows = torch::tensor({{1.f, 3.f, 2.f, 9.f, 0.f}, {1.f, 1.f, -1.f, 9.f, 0.f}});
  torch::Tensor out = model->forward(rows);
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{2, 1}));
  EXPECT_FLOAT_EQ(out[0][0].item<float>(), 29.5f);
  EXPECT_FLOAT_EQ(out[1][0].item<float>(), 1.5f);
}

TEST(WideDeep, SumsTheLinearAndTheDeepLogits) {
  torch::manual_seed(3);
  auto model = build("{type: wide_deep, num_classes: 2, hidden: [4]}", wide_and_deep());
  auto wide = build("{type: linear, num_classes: 2, input: wide}", wide_and_deep());
  auto deep = build("{type: dnn, num_classes: 2, input: deep, hidden: [4]}", wide_and_deep());
  // Give the parts the combined model's weights (linear.* is its wide.*; deep.* the same), then
  // compare.
  torch::NoGradGuard no_grad;
  for (const auto& p : wide->named_parameters(true))
    p.value().copy_(parameter(*model, "wide." + p.key().substr(std::string("linear.").size())));
  for (const auto& p : deep->named_parameters(true)) p.value().copy_(parameter(*model, p.key()));
  torch::Tensor rows = torch::tensor({{0.5f, -1.f, 1.f, 2.f, 3.f}, {0.f, 0.f, 0.f, 0.f, 1.f}});
  EXPECT_TRUE(torch::allclose(model->forward(rows), wide->forward(rows) + deep->forward(rows)));
  EXPECT_EQ(model->output_shape(), (Shape{2}));
}

TEST(Dnn, EmbedsEachIndexAfterTheNumbers) {
  auto model = build("{type: dnn, num_classes: 1, input: deep, hidden: [3]}", wide_and_deep(2));
  // One number and a 2-wide embedding feed the first hidden layer.
  EXPECT_EQ(parameter(*model, "deep.layers.0.weight").sizes().vec(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(parameter(*model, "deep.features.embedding0.weight").sizes().vec(),
            (std::vector<int64_t>{4, 2}));
}

TEST(Graph, NodesOfAModelsFirstLayerTakeTheNamedInputs) {
  std::string graph =
      "{type: sequential, layers: [{type: graph, nodes: ["
      "{name: w, inputs: [wide], layers: [{type: linear, out: 2}]}, "
      "{name: d, inputs: [deep], layers: [{type: linear, out: 2}]}, "
      "{name: sum, inputs: [w, d], merge: add}]}]}";
  auto model = build(graph, wide_and_deep());
  torch::NoGradGuard no_grad;
  torch::Tensor rows = torch::rand({3, 5});
  torch::Tensor w = parameter(*model, "layers.0.w.0.weight"),
                wb = parameter(*model, "layers.0.w.0.bias");
  torch::Tensor d = parameter(*model, "layers.0.d.0.weight"),
                db = parameter(*model, "layers.0.d.0.bias");
  torch::Tensor expected = torch::nn::functional::linear(rows.narrow(1, 0, 3), w, wb) +
                           torch::nn::functional::linear(rows.narrow(1, 3, 2), d, db);
  EXPECT_TRUE(torch::allclose(model->forward(rows), expected));
  // After another layer the row is gone, and so are its parts.
  std::string later =
      "{type: sequential, layers: [relu, {type: graph, nodes: "
      "[{name: w, inputs: [wide]}]}]}";
  EXPECT_THAT([&] { build(later, wide_and_deep()); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("takes \"wide\", not defined")));
}

TEST(TabularModels, ALayoutThatDoesNotFitIsAConfigErrorSayingWhatToGive) {
  auto problem_of = [](const std::string& config, const Inputs& input) {
    try {
      build(config, input);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("built");
  };
  EXPECT_THAT(problem_of("{type: wide_deep, num_classes: 2}", Inputs({5})),
              AllOf(HasSubstr("model.wide"), HasSubstr("inputs: {wide:")));
  EXPECT_THAT(
      problem_of("{type: wide_deep, num_classes: 2, deep: tall}", wide_and_deep()),
      AllOf(HasSubstr("model.deep"), HasSubstr("no input \"tall\""), HasSubstr("wide, deep")));
  EXPECT_THAT(problem_of("{type: dnn, num_classes: 2}", wide_and_deep(0)),
              AllOf(HasSubstr("model.input"), HasSubstr("data.columns.c an embedding_dim")));
  // Its wide part weighs categories itself: an index needs no embedding_dim there.
  EXPECT_EQ(problem_of("{type: linear, num_classes: 2}", wide_and_deep(0)), "built");
}

}  // namespace row_features_test
}  // namespace kiln::models
