// Layers over sequences: embedding, lstm, gru, multihead_attention, transformer_encoder and linear
// per step. Their values are checked against PyTorch in tests/golden; here, the shapes they infer,
// what they learn from, and the errors wrong inputs give.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/models/model.h"
#include "tests/support/models.h"

namespace kiln::models {
namespace sequence_layers_test {

using ::testing::HasSubstr;

std::shared_ptr<Model> build(const std::string& layers, const Shape& input) {
  return testing::build_sequential("layers: " + layers, input);
}

// The message building `layers` for `input` fails with; fails the test when it builds.
std::string build_error(const std::string& layers, const Shape& input) {
  try {
    build(layers, input);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "built " << layers;
  return "";
}

TEST(Embedding, TurnsIndicesIntoVectorsAndKeepsThePaddingRowZero) {
  auto model = build("[{type: embedding, entries: 5, dim: 3, padding_index: 4}]", {6});
  EXPECT_EQ(model->output_shape(), (Shape{6, 3}));
  torch::Tensor weight = model->named_parameters()["layers.0.weight"];
  EXPECT_TRUE(torch::equal(weight[4], torch::zeros({3})));

  torch::Tensor indices = torch::tensor({{0.0f, 4.0f, 2.0f, 2.0f, 1.0f, 3.0f}});
  torch::Tensor output = model->forward(indices);
  EXPECT_TRUE(torch::equal(output[0][2], weight[2]));
  output.sum().backward();
  EXPECT_TRUE(torch::equal(weight.grad()[4], torch::zeros({3}))) << "the padding row learns";
  EXPECT_TRUE(torch::equal(weight.grad()[2], torch::full({3}, 2.0f))) << "index 2 appears twice";
}

TEST(Embedding, AnIndexOutsideTheTableIsAClearError) {
  auto model = build("[{type: embedding, entries: 5, dim: 3}]", {2});
  for (float bad : {5.0f, -1.0f}) {
    try {
      model->forward(torch::tensor({{1.0f, bad}}));
      ADD_FAILURE() << "looked up index " << bad;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("got index {}", int(bad))));
      EXPECT_THAT(e.what(), HasSubstr("entries 0 .. 4"));
    }
  }
  EXPECT_THAT(build_error("[{type: embedding, entries: 5, dim: 3, padding_index: 5}]", {2}),
              HasSubstr("padding_index 5 is not below entries 5"));
}

TEST(Recurrent, GivesTheLastStateOrEveryStep) {
  EXPECT_EQ(build("[{type: lstm, hidden: 4}]", {7, 3})->output_shape(), (Shape{4}));
  EXPECT_EQ(build("[{type: gru, hidden: 4, bidirectional: true}]", {7, 3})->output_shape(),
            (Shape{8}));
  EXPECT_EQ(
      build("[{type: lstm, hidden: 4, layers: 2, output: sequence, bidirectional: true}]", {7, 3})
          ->output_shape(),
      (Shape{7, 8}));
}

TEST(Recurrent, TheLastStateOfAOneDirectionLstmIsItsOutputAtTheLastStep) {
  auto last = build("[{type: lstm, hidden: 3}]", {5, 2});
  auto sequence = build("[{type: lstm, hidden: 3, output: sequence}]", {5, 2});
  torch::NoGradGuard no_grad;
  auto source = last->named_parameters();
  for (auto& item : sequence->named_parameters()) item.value().copy_(source[item.key()]);
  torch::Tensor x = torch::randn({4, 5, 2});
  EXPECT_TRUE(torch::allclose(last->forward(x), sequence->forward(x).select(1, 4)));
}

TEST(Recurrent, RefusesInputsThatAreNotSequences) {
  EXPECT_THAT(build_error("[{type: lstm, hidden: 4}]", {1, 28, 28}),
              HasSubstr("lstm expects sequences [steps, features], got [1, 28, 28]"));
  EXPECT_THAT(build_error("[{type: gru, hidden: 4, dropout: 0.2}]", {3, 2}),
              HasSubstr("with layers: 1 it must be 0"));
}

TEST(Attention, KeepsTheShapeAndNeedsHeadsThatDivideTheDim) {
  EXPECT_EQ(build("[{type: multihead_attention, heads: 2}]", {5, 6})->output_shape(),
            (Shape{5, 6}));
  EXPECT_THAT(build_error("[{type: multihead_attention, heads: 4}]", {5, 6}),
              HasSubstr("heads 4 do not divide dim 6 of [5, 6]"));
  EXPECT_THAT(build_error("[{type: transformer_encoder, heads: 2}]", {12}),
              HasSubstr("transformer_encoder expects sequences [steps, dim], got [12]"));
}

TEST(Attention, ACausalStepDoesNotSeeLaterSteps) {
  auto model = build("[{type: transformer_encoder, heads: 2, layers: 2, causal: true}]", {6, 4});
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::randn({1, 6, 4});
  torch::Tensor changed_end = x.clone();
  changed_end[0][5] += 1;
  torch::Tensor a = model->forward(x), b = model->forward(changed_end);
  EXPECT_TRUE(torch::allclose(a.slice(1, 0, 5), b.slice(1, 0, 5)));
  EXPECT_FALSE(torch::allclose(a[0][5], b[0][5]));
}

TEST(Linear, AppliesToEachStepButRefusesImages) {
  EXPECT_EQ(build("[{type: linear, out: 3}]", {5, 8})->output_shape(), (Shape{5, 3}));
  EXPECT_THAT(build_error("[{type: linear, out: 3}]", {1, 28, 28}),
              HasSubstr("put a flatten layer before it"));
}

}  // namespace sequence_layers_test
}  // namespace kiln::models
