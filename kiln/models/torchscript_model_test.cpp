// A model written in PyTorch (tests/golden/custom_step/step.pt, make_custom_step.py): its
// parameters and buffers under PyTorch's names are the tensors its scripted code reads; train and
// eval mode and freezing reach that code; what it cannot be is refused naming the file.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/models/torchscript_model.h"

namespace kiln::models {
namespace torchscript_model_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string golden(const std::string& file) {
  return std::string(KILN_GOLDEN_DIR) + "/custom_step/" + file;
}

std::shared_ptr<Model> step_model() {
  return build_model(
      ComponentSpec("model", Json{{"type", "torchscript"}, {"file", golden("step.pt")}}), Shape{4});
}

TEST(TorchScriptModel, NamesItsTensorsAsPyTorchDoes) {
  auto model = step_model();
  std::vector<std::string> names;
  for (const auto& item : model->named_parameters()) names.push_back(item.key());
  EXPECT_THAT(names, ElementsAre("hidden.weight", "hidden.bias", "norm.weight", "norm.bias",
                                 "out.weight", "out.bias"));
  EXPECT_EQ(model->named_buffers().size(), 3u);  // running mean, variance, batches tracked
  EXPECT_EQ(model->output_shape(), (Shape{3}));
}

TEST(TorchScriptModel, AnUpdateOfItsParametersIsSeenByTheScriptedCode) {
  auto model = step_model();
  model->eval();
  torch::Tensor x = torch::ones({2, 4});
  torch::Tensor before = model->forward(x);
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["out.bias"].add_(1.0);
  }
  EXPECT_TRUE(torch::allclose(model->forward(x), before + 1.0));
}

TEST(TorchScriptModel, TrainAndEvalModeReachTheScriptedCode) {
  auto model = step_model();
  auto& scripted = as_torchscript(*model)->scripted();
  torch::Tensor mean = model->named_buffers()["norm.running_mean"].clone();
  model->train();
  EXPECT_TRUE(scripted.is_training());
  model->forward(torch::randn({8, 4}));  // batch statistics: the running mean moves
  EXPECT_FALSE(torch::equal(model->named_buffers()["norm.running_mean"], mean));
  model->eval();
  EXPECT_FALSE(scripted.is_training());
  mean = model->named_buffers()["norm.running_mean"].clone();
  model->forward(torch::randn({8, 4}));
  EXPECT_TRUE(torch::equal(model->named_buffers()["norm.running_mean"], mean));
}

TEST(TorchScriptModel, AFrozenModuleStaysInEvalModeInTheScriptedCode) {
  auto model = step_model();
  freeze(*model, {"norm"}, "train.freeze");
  model->train();
  EXPECT_TRUE(as_torchscript(*model)->scripted().is_training());
  EXPECT_FALSE(as_torchscript(*model)->scripted().attr("norm").toModule().is_training());
  torch::Tensor mean = model->named_buffers()["norm.running_mean"].clone();
  model->forward(torch::randn({8, 4}));
  EXPECT_TRUE(torch::equal(model->named_buffers()["norm.running_mean"], mean));
}

std::string refusal(const std::string& file, const Shape& input = {4}) {
  try {
    ComponentSpec spec("model", Json{{"type", "torchscript"}, {"file", file}});
    spec.path = "model";
    build_model(spec, input);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TorchScriptModel, WhatItCannotBeIsRefusedNamingTheFile) {
  EXPECT_THAT(refusal(""), HasSubstr("model.file: no module"));
  EXPECT_THAT(refusal(golden("nowhere.pt")), HasSubstr("nowhere.pt: missing"));
  EXPECT_THAT(refusal(golden("data.csv")),
              HasSubstr("data.csv: is not a TorchScript model that torch.jit.load reads"));
  EXPECT_THAT(refusal(golden("pair.pt")), HasSubstr("forward returns (Tensor, Tensor)"));
  // Examples of another shape: the interpreter's own words, not its first line.
  EXPECT_THAT(refusal(golden("step.pt"), {5}),
              HasSubstr("forward fails on a batch of examples of shape [5]: RuntimeError: mat1 "
                        "and mat2 shapes cannot be multiplied"));
}

}  // namespace torchscript_model_test
}  // namespace kiln::models
