// The sequential model and the layers it stacks: shape inference against real forward passes,
// parameter names, and the errors a wrong stacking or option gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/models/layers/padding.h"
#include "kiln/models/model.h"
#include "tests/support/models.h"

namespace kiln::models {
namespace sequential_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

using testing::forward_shape;

std::shared_ptr<Model> build(const std::string& layers, const Shape& input) {
  return testing::build_sequential("layers: " + layers, input);
}

template <class Module>
int count_modules(const torch::nn::Module& model) {
  int count = 0;
  for (const auto& m : model.modules()) count += m->as<Module>() != nullptr;
  return count;
}

std::vector<std::string> keys(const torch::OrderedDict<std::string, torch::Tensor>& dict) {
  return dict.keys();
}

TEST(Sequential, InfersTheShapeOfAConvStack) {
  const Shape input = {1, 28, 28};
  auto model = build(
      "[{type: conv2d, out: 4, kernel: 3, padding: same}, batchnorm, relu, {type: maxpool, "
      "kernel: 2}, flatten, {type: linear, out: 10}, {type: dropout, p: 0.5}]",
      input);
  EXPECT_THAT(model->output_shape(), ElementsAre(10));
  EXPECT_EQ(forward_shape(*model, input), model->output_shape());
}

TEST(Sequential, InfersConvolutionShapesForPaddingStrideAndDilation) {
  struct Case {
    std::string layer;
    Shape input, expected;
  };
  const Case cases[] = {
      {"{type: conv2d, out: 3, kernel: 3, padding: same}", {1, 28, 28}, {3, 28, 28}},
      {"{type: conv2d, out: 3, kernel: 3, padding: valid}", {1, 28, 28}, {3, 26, 26}},
      {"{type: conv2d, out: 3, kernel: 5, padding: 2}", {1, 28, 28}, {3, 28, 28}},
      {"{type: conv2d, out: 3, kernel: 3, padding: 2}", {2, 13, 17}, {3, 15, 19}},
      {"{type: conv2d, out: 3, kernel: 3, stride: 2, padding: valid}", {1, 28, 28}, {3, 13, 13}},
      {"{type: conv2d, out: 3, kernel: 4, stride: 2, padding: 1}", {1, 27, 28}, {3, 13, 14}},
      {"{type: conv2d, out: 3, kernel: 3, dilation: 2, padding: valid}", {1, 28, 28}, {3, 24, 24}},
      {"{type: conv2d, out: 3, kernel: 3, dilation: 2, padding: same}", {1, 28, 28}, {3, 28, 28}},
      {"{type: conv2d, out: 2, kernel: 3, stride: 2, dilation: 2, padding: 2}",
       {1, 28, 28},
       {2, 14, 14}},
      {"{type: conv2d, out: 4, kernel: 3, groups: 2, padding: valid}", {2, 9, 9}, {4, 7, 7}},
  };
  for (const auto& c : cases) {
    auto model = build("[" + c.layer + "]", c.input);
    EXPECT_EQ(model->output_shape(), c.expected) << c.layer;
    EXPECT_EQ(forward_shape(*model, c.input), model->output_shape()) << c.layer;
  }
}

TEST(Sequential, NamesParametersAndBuffersByLayerIndex) {
  auto model = build("[{type: conv2d, out: 2}, batchnorm, relu, flatten, {type: linear, out: 3}]",
                     {1, 4, 4});
  EXPECT_THAT(keys(model->named_parameters()),
              UnorderedElementsAre("layers.0.weight", "layers.0.bias", "layers.1.weight",
                                   "layers.1.bias", "layers.4.weight", "layers.4.bias"));
  EXPECT_THAT(keys(model->named_buffers()),
              UnorderedElementsAre("layers.1.running_mean", "layers.1.running_var",
                                   "layers.1.num_batches_tracked"));
  EXPECT_THAT(model->named_parameters()["layers.4.weight"].sizes().vec(), ElementsAre(3, 32));
}

TEST(Sequential, LinearOnAnUnflattenedInputNamesTheLayerAndShape) {
  try {
    build("[{type: linear, out: 10}]", {1, 28, 28});
    FAIL() << "built a linear layer over [1, 28, 28]";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.layers[0]");
    EXPECT_THAT(e.what(), HasSubstr("model.layers[0]"));
    EXPECT_THAT(e.what(), HasSubstr("[1, 28, 28]"));
    EXPECT_THAT(e.what(), HasSubstr("flatten"));
  }
}

TEST(Sequential, AWrongStackingDeeperInNamesThatLayer) {
  try {
    build("[flatten, relu, {type: conv2d, out: 2}]", {1, 28, 28});
    FAIL() << "built a conv2d over flat inputs";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.layers[2]");
    EXPECT_THAT(e.what(), HasSubstr("[784]"));
  }
}

TEST(Sequential, RejectsAnEmptyLayerList) {
  EXPECT_THROW(read_spec("model", "{type: sequential, layers: []}"), ConfigError);
  EXPECT_THROW(read_spec("model", "{type: sequential}"), ConfigError);
}

TEST(Conv2d, SamePaddingNeedsAnOddKernel) {
  try {
    build("[{type: conv2d, out: 2, kernel: 2, padding: same}]", {1, 28, 28});
    FAIL() << "padded an even kernel symmetrically";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.layers[0]");
    EXPECT_THAT(e.what(), HasSubstr("odd kernel"));
  }
}

TEST(Conv2d, SamePaddingNeedsStrideOne) {
  EXPECT_THROW(build("[{type: conv2d, out: 2, stride: 2, padding: same}]", {1, 8, 8}), ConfigError);
}

TEST(Conv2d, RejectsAKernelLargerThanTheInput) {
  EXPECT_THROW(build("[{type: conv2d, out: 2, kernel: 5, padding: valid}]", {1, 4, 4}),
               ConfigError);
  // With a stride the window overshoots by less than one step; still no output.
  EXPECT_THROW(build("[{type: conv2d, out: 2, kernel: 3, stride: 2, padding: valid}]", {1, 2, 2}),
               ConfigError);
  EXPECT_THROW(build("[{type: maxpool, kernel: 3, stride: 2}]", {1, 2, 2}), ConfigError);
}

TEST(BatchNorm, Picks2dForImagesAnd1dOtherwise) {
  auto image = build("[batchnorm]", {3, 5, 5});
  EXPECT_EQ(count_modules<torch::nn::BatchNorm2dImpl>(*image), 1);
  EXPECT_EQ(count_modules<torch::nn::BatchNorm1dImpl>(*image), 0);
  EXPECT_EQ(forward_shape(*image, {3, 5, 5}), (Shape{3, 5, 5}));
  for (const Shape& input : {Shape{6}, Shape{3, 7}}) {
    auto flat = build("[batchnorm]", input);
    EXPECT_EQ(count_modules<torch::nn::BatchNorm1dImpl>(*flat), 1);
    EXPECT_EQ(count_modules<torch::nn::BatchNorm2dImpl>(*flat), 0);
    EXPECT_EQ(forward_shape(*flat, input), input);
  }
  EXPECT_THAT(image->named_buffers()["layers.0.running_mean"].sizes().vec(), ElementsAre(3));
  EXPECT_THROW(build("[batchnorm]", {1, 2, 3, 4}), ConfigError);
}

TEST(MaxPool, Pools1dOverChannelsAndLength) {
  auto model = build("[{type: maxpool, kernel: 2}]", {3, 10});
  EXPECT_THAT(model->output_shape(), ElementsAre(3, 5));
  EXPECT_EQ(count_modules<torch::nn::MaxPool1dImpl>(*model), 1);
  torch::Tensor x = torch::tensor({1.0f, 5.0f, 2.0f, 0.0f}).view({1, 1, 4});
  EXPECT_TRUE(torch::equal(model->forward(x), torch::tensor({5.0f, 2.0f}).view({1, 1, 2})));
  EXPECT_EQ(forward_shape(*model, {3, 10}), model->output_shape());
}

TEST(MaxPool, Pools2dWithStrideAndPadding) {
  auto model = build("[{type: maxpool, kernel: 3, stride: 2, padding: 1}]", {2, 9, 8});
  EXPECT_THAT(model->output_shape(), ElementsAre(2, 5, 4));
  EXPECT_EQ(count_modules<torch::nn::MaxPool2dImpl>(*model), 1);
  EXPECT_EQ(forward_shape(*model, {2, 9, 8}), model->output_shape());
  EXPECT_THROW(build("[{type: maxpool, kernel: 2, padding: 2}]", {1, 8, 8}), ConfigError);
  EXPECT_THROW(build("[maxpool]", {8}), ConfigError);
}

Padding read_padding(const Json& value) {
  Padding padding;
  OptionTraits<Padding>::read(value, padding, ReadContext{"layer.padding", nullptr});
  return padding;
}

TEST(Padding, ReadsSameValidAndANumber) {
  EXPECT_EQ(read_padding("same").mode, Padding::Mode::kSame);
  EXPECT_EQ(read_padding("valid").mode, Padding::Mode::kValid);
  Padding three = read_padding(3);
  EXPECT_EQ(three.mode, Padding::Mode::kExplicit);
  EXPECT_EQ(three.amount, 3);
  EXPECT_EQ(read_padding(0).mode, Padding::Mode::kExplicit);
  EXPECT_EQ(OptionTraits<Padding>::write(three), Json(3));
  EXPECT_EQ(OptionTraits<Padding>::write(read_padding("same")), Json("same"));
  EXPECT_EQ(OptionTraits<Padding>::write(read_padding("valid")), Json("valid"));
}

TEST(Padding, RejectsNegativeAndUnknownValues) {
  for (const Json& bad : {Json(-1), Json("full"), Json(1.5), Json(true)}) {
    try {
      read_padding(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "layer.padding");
      EXPECT_THAT(e.what(), HasSubstr(bad.dump()));
    }
  }
}

TEST(Padding, ResolvesToZerosPerSide) {
  EXPECT_EQ((Padding{Padding::Mode::kSame, 0}).resolve(5), 2);
  EXPECT_EQ((Padding{Padding::Mode::kValid, 0}).resolve(5), 0);
  EXPECT_EQ((Padding{Padding::Mode::kExplicit, 3}).resolve(5), 3);
  EXPECT_THROW((Padding{Padding::Mode::kSame, 0}).resolve(4), Error);
  EXPECT_EQ(window_output(28, 3, 2, 2, 2), 14);
}

TEST(Padding, AConvSpecWithABadPaddingFailsWhenRead) {
  try {
    read_spec("model", "{type: sequential, layers: [{type: conv2d, out: 2, padding: full}]}");
    FAIL() << "accepted padding: full";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.layers[0].padding");
  }
}

TEST(Layers, InferTheShapesTheirForwardPassesProduce) {
  struct Case {
    std::string layer;
    Shape input, expected;
  };
  const Case cases[] = {
      {"global_avgpool", {3, 4, 5}, {3}},
      {"global_avgpool", {3, 7}, {3}},
      {"{type: reshape, shape: [3, -1]}", {12}, {3, 4}},
      {"{type: reshape, shape: [2, 3, 2]}", {3, 4}, {2, 3, 2}},
      {"{type: avgpool, kernel: 2}", {2, 7}, {2, 3}},
      {"{type: avgpool, kernel: 3, stride: 2, padding: 1}", {2, 5, 6}, {2, 3, 3}},
      {"{type: softmax, dim: 0}", {3, 4}, {3, 4}},
      {"{type: layernorm, dims: 2}", {3, 4}, {3, 4}},
      {"{type: groupnorm, groups: 2}", {4, 3, 3}, {4, 3, 3}},
      {"{type: leaky_relu, negative_slope: 0.1}", {5}, {5}},
      {"{type: gelu, approximate: tanh}", {5}, {5}},
      {"{type: conv1d, out: 4, kernel: 5}", {2, 30}, {4, 30}},
      {"{type: conv1d, out: 4, kernel: 3, stride: 2, padding: valid}", {2, 30}, {4, 14}},
      {"{type: upsample, scale: 3}", {2, 4, 5}, {2, 12, 15}},
      {"{type: upsample, mode: linear}", {2, 6}, {2, 12}},
      {"{type: conv_transpose2d, out: 3, kernel: 4, stride: 2, padding: 1}",
       {2, 7, 7},
       {3, 14, 14}},
      {"{type: conv_transpose2d, out: 3, kernel: 3, stride: 2, padding: 1, output_padding: 1}",
       {2, 7, 7},
       {3, 14, 14}},
      {"{type: depthwise_separable_conv2d, out: 8}", {4, 9, 9}, {8, 9, 9}},
      {"{type: depthwise_separable_conv2d, out: 8, stride: 2, padding: 1}", {4, 9, 9}, {8, 5, 5}},
  };
  for (const auto& c : cases) {
    auto model = build("[" + c.layer + "]", c.input);
    EXPECT_EQ(model->output_shape(), c.expected) << c.layer;
    EXPECT_EQ(forward_shape(*model, c.input), model->output_shape()) << c.layer;
  }
}

TEST(Layers, OptionsThatDoNotFitTheInputNameTheLayerAndTheShape) {
  struct Case {
    std::string layer;
    Shape input;
    std::string message;
  };
  const Case cases[] = {
      {"{type: groupnorm, groups: 3}", {4, 3, 3}, "3 groups do not divide 4 channels"},
      {"{type: reshape, shape: [5, -1]}", {12}, "inputs [12] do not fit shape [5, -1]"},
      {"{type: reshape, shape: [5, 2]}", {12}, "(12 values) do not fit [5, 2]"},
      {"{type: softmax, dim: 2}", {2, 5}, "softmax dim 2 does not exist in inputs [2, 5]"},
      {"{type: layernorm, dims: 3}", {3, 4}, "layernorm over 3 dimensions, but inputs [3, 4]"},
      {"global_avgpool", {5}, "global_avgpool expects inputs [channels, positions...], got [5]"},
      {"{type: avgpool, kernel: 4}", {2, 3}, "avgpool kernel 4 does not fit inputs [2, 3]"},
      {"{type: conv1d, out: 2}",
       {1, 8, 8},
       "conv1d expects inputs [channels, length], got [1, 8, 8]"},
      {"{type: conv1d, out: 2, kernel: 4}", {1, 8}, "odd kernel"},
      {"upsample", {8}, "upsample expects inputs [channels, length] or"},
      {"{type: conv_transpose2d, out: 2, stride: 2, output_padding: 2}",
       {1, 4, 4},
       "output_padding 2 must be smaller than stride 2"},
      {"{type: depthwise_separable_conv2d, out: 2}",
       {4, 9},
       "expects inputs [channels, height, width]"},
  };
  for (const auto& c : cases) {
    try {
      build("[relu, " + c.layer + "]", c.input);
      ADD_FAILURE() << c.layer << " built over " << shape_text(c.input);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "model.layers[1]") << c.layer;
      EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.layer;
    }
  }
  EXPECT_THROW(build("[{type: reshape, shape: [-1, -1]}]", {4}), ConfigError);
  EXPECT_THROW(build("[{type: groupnorm}]", {4, 2}), ConfigError) << "groups is required";
  EXPECT_THROW(build("[{type: gelu, approximate: fast}]", {4}), ConfigError);
}

}  // namespace sequential_test
}  // namespace kiln::models
