// The shape a model is built for is the one its eval transforms give: Fashion-MNIST's 28x28
// images resized to 32x32 build a VGG (which needs 32x32).

#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/experiment/experiment.h"

namespace kiln::experiment {

namespace model_inputs_test {

ComponentList transform_list(const std::string& yaml) {
  ComponentList list("transform");
  OptionTraits<ComponentList>::read(parse_config_text(yaml, "t.yaml", false), list,
                                    ReadContext{"transforms"});
  return list;
}

Experiment vgg_experiment(const std::string& transforms) {
  RawConfig raw;
  raw.tree = parse_config_text(
      "data: {train: {type: fashion_mnist, split: test, limit: 4}, batch_size: 2,\n"
      "       transforms: {train: " +
          transforms + ", eval: " + transforms +
          "}}\n"
          "model: {type: vgg, depth: 11, hidden: 8, pool: 1}\nloss: cross_entropy\n",
      "exp.yaml", false);
  return Experiment(parse_experiment(raw), torch::kCPU);
}

TEST(ModelInputs, AreTheExamplesShapeAfterTheTransforms) {
  models::Shape image = {1, 28, 28};
  EXPECT_EQ(model_inputs_after({}, image, torch::kFloat32).shape, image);
  Transforms normalize = build_transforms(transform_list("[{type: normalize, mean: 0.3, std: 2}]"));
  EXPECT_EQ(model_inputs_after(normalize, image, torch::kFloat32).shape, image);
  Transforms resize = build_transforms(transform_list("[{type: resize, size: [32, 40]}]"));
  EXPECT_EQ(model_inputs_after(resize, image, torch::kFloat32).shape, (models::Shape{1, 32, 40}));
}

TEST(ModelInputs, AModelIsBuiltForImagesResizedByItsTransforms) {
  Experiment experiment = vgg_experiment("[{type: resize, size: 32}]");
  std::shared_ptr<models::Model> model = experiment.build_model("train");
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor logits = model->forward(torch::zeros({2, 1, 32, 32}));
  EXPECT_EQ(logits.sizes(), (torch::IntArrayRef{2, 10}));
}

}  // namespace model_inputs_test
}  // namespace kiln::experiment
