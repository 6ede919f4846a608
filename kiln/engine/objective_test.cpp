// The objective: one head keeps the plain tags; several heads give the weighted sum of their
// losses, each head's own loss and metrics under split/HEAD/..., and targets from the data's
// target, the input or a named target.

#include "kiln/engine/objective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace objective_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two heads on a shared linear backbone over 4 features: `class` (3 classes, cross_entropy,
// accuracy) and `echo`, which reconstructs the input (mse, weight 0.5).
std::shared_ptr<models::Model> two_head_model() {
  return models::build_model(
      read_spec("model",
                "{type: multi_head, backbone: [{type: linear, out: 6}, relu], heads: ["
                "{name: class, layers: [{type: linear, out: 3}], loss: cross_entropy, "
                "metrics: [accuracy]}, "
                "{name: echo, layers: [{type: linear, out: 4}], loss: mse, weight: 0.5, "
                "target: input}]}"),
      {4});
}

Objective objective_for(const models::Model& model) {
  std::vector<Objective::Head> heads;
  for (const models::HeadSpec& head : model.heads()) {
    std::vector<NamedMetric> metrics;
    for (const auto& spec : head.metrics.items)
      metrics.push_back({spec.type(), metrics::metric_registry().create(spec)});
    heads.push_back({head.name, losses::loss_registry().create(head.loss), head.weight,
                     std::move(metrics), head.target, head.config_path()});
  }
  return Objective(std::move(heads));
}

data::Batch some_batch() {
  torch::manual_seed(4);
  return {torch::randn({5, 4}), torch::tensor({0, 1, 2, 0, 1}, torch::kInt64), {}, {}};
}

TEST(Objective, SumsTheWeightedHeadLossesAndTagsEachHead) {
  auto model = two_head_model();
  Objective objective = objective_for(*model);
  data::Batch batch = some_batch();
  torch::Tensor total = objective.compute(*model, batch);

  auto outputs = model->forward_named(batch.input);
  double class_loss =
      torch::nn::functional::cross_entropy(outputs["class"], batch.target).item<double>();
  double echo_loss = torch::mse_loss(outputs["echo"], batch.input).item<double>();
  EXPECT_NEAR(total.item<double>(), class_loss + 0.5 * echo_loss, 1e-6);

  MetricValues values = objective.values("val");
  EXPECT_NEAR(values.at("val/loss"), class_loss + 0.5 * echo_loss, 1e-6);
  EXPECT_NEAR(values.at("val/class/loss"), class_loss, 1e-6);
  EXPECT_NEAR(values.at("val/echo/loss"), echo_loss, 1e-6);
  double accuracy =
      outputs["class"].argmax(1).eq(batch.target).to(torch::kDouble).mean().item<double>();
  EXPECT_DOUBLE_EQ(values.at("val/class/accuracy"), accuracy);
  EXPECT_THAT(objective.tags("val"),
              ElementsAre("val/loss", "val/class/loss", "val/class/accuracy", "val/echo/loss"));

  // Gradients reach both heads and the backbone.
  total.backward();
  for (const auto& p : model->named_parameters())
    EXPECT_TRUE(p.value().grad().defined() && p.value().grad().abs().sum().item<double>() > 0)
        << p.key();
}

TEST(Objective, LossesAreMeansPerExampleOverBatchesUntilReset) {
  auto model = two_head_model();
  Objective objective = objective_for(*model);
  data::Batch batch = some_batch();
  torch::NoGradGuard no_grad;
  double whole = objective.compute(*model, batch).item<double>();
  objective.reset();
  objective.compute(*model, {batch.input.slice(0, 0, 2), batch.target.slice(0, 0, 2), {}, {}});
  objective.compute(*model, {batch.input.slice(0, 2), batch.target.slice(0, 2), {}, {}});
  EXPECT_NEAR(objective.values("val").at("val/loss"), whole, 1e-5);
}

TEST(Objective, ASingleOutputModelKeepsThePlainTags) {
  auto model = models::build_model(
      read_spec("model", "{type: sequential, layers: [{type: linear, out: 3}]}"), {4});
  std::vector<NamedMetric> metrics;
  metrics.push_back(
      {"accuracy", metrics::metric_registry().create(read_spec("metric", "accuracy"))});
  Objective objective(test_rig::single_head(
      losses::loss_registry().create(read_spec("loss", "cross_entropy")), std::move(metrics)));
  data::Batch batch = some_batch();
  torch::Tensor loss = objective.compute(*model, batch);
  torch::Tensor expected =
      torch::nn::functional::cross_entropy(model->forward(batch.input), batch.target);
  EXPECT_TRUE(torch::equal(loss, expected)) << "one head: exactly the loss, bit for bit";
  EXPECT_THAT(objective.tags("train"), ElementsAre("train/loss", "train/accuracy"));
}

// What a loss or metric refuses of the outputs is a config error at its path: an option it names
// (relative to itself), or the component itself for any other complaint.
TEST(Objective, ALossOrMetricThatDoesNotFitTheOutputsIsAConfigErrorAtItsPath) {
  auto refusal = [&](const std::string& model_yaml) {
    auto built = models::build_model(read_spec("model", model_yaml), {4});
    Objective objective = objective_for(*built);
    try {
      objective.compute(*built, some_batch());
    } catch (const ConfigError& e) {
      return e.path() + ": " + e.problem();
    }
    return std::string("no error");
  };
  std::string heads =
      "{type: multi_head, backbone: [{type: linear, out: 6}], heads: [{name: echo, layers: "
      "[{type: linear, out: 4}], loss: mse, target: input}, {name: class, layers: [{type: "
      "linear, out: 3}], ";
  EXPECT_THAT(refusal(heads + "loss: {type: cross_entropy, class_weights: [1, 2]}}]}"),
              HasSubstr("model.heads[1].loss.class_weights: cross_entropy: class_weights has 2 "
                        "weights but the logits have 3 classes"));
  EXPECT_THAT(refusal(heads + "loss: cross_entropy, metrics: [accuracy, {type: top_k_accuracy, "
                              "k: 3}]}]}"),
              HasSubstr("model.heads[1].metrics[1].k: top_k_accuracy: k = 3 is not below"));
  EXPECT_THAT(refusal(heads + "loss: cross_entropy, metrics: [roc_auc]}]}"),
              HasSubstr("model.heads[1].metrics[0]: roc_auc is for binary tasks"));
  EXPECT_THAT(refusal(heads + "loss: mse}]}"),
              HasSubstr("model.heads[1].loss: mse expects outputs and targets of the same shape"));
}

// With class weights a batch's mean divides by its targets' weights, not its size: the loss over
// batches of 2 and 3 is the loss over the 5 examples at once.
TEST(Objective, AClassWeightedLossIsItsMeanOverTheWholeSetWhateverTheBatches) {
  auto model = models::build_model(
      read_spec("model", "{type: sequential, layers: [{type: linear, out: 3}]}"), {4});
  auto weighted = [] {
    return test_rig::single_head(losses::loss_registry().create(
                                     read_spec("loss",
                                               "{type: cross_entropy, class_weights: [1, 5, 0.5], "
                                               "label_smoothing: 0.1}")),
                                 {});
  };
  data::Batch batch = some_batch();
  Objective whole(weighted()), parts(weighted());
  whole.compute(*model, batch);
  parts.compute(*model, {batch.input.slice(0, 0, 2), batch.target.slice(0, 0, 2), {}, {}});
  parts.compute(*model, {batch.input.slice(0, 2), batch.target.slice(0, 2), {}, {}});
  EXPECT_NEAR(parts.values("val").at("val/loss"), whole.values("val").at("val/loss"), 1e-6);
  EXPECT_GT(whole.values("val").at("val/loss"), 0);
}

TEST(Objective, AHeadWantingATargetTheDataLacksNamesWhatThereIs) {
  auto model = models::build_model(
      read_spec("model",
                "{type: multi_head, backbone: [{type: linear, out: 3}], heads: ["
                "{name: coarse, layers: [{type: linear, out: 2}], loss: cross_entropy, "
                "target: coarse_label}]}"),
      {4});
  Objective objective = objective_for(*model);
  data::Batch batch = some_batch();
  batch.targets["fine_label"] = batch.target;
  try {
    objective.compute(*model, batch);
    FAIL() << "no error for a missing target";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("head \"coarse\" wants target \"coarse_label\""));
    EXPECT_THAT(e.what(), HasSubstr("it has: target, input, fine_label"));
  }
  batch.targets["coarse_label"] = torch::tensor({0, 1, 1, 0, 1}, torch::kInt64);
  EXPECT_NO_THROW(objective.compute(*model, batch));
}

TEST(Objective, CheckTargetsRefusesDataWithoutTheNamedTargetBeforeAnyBatch) {
  auto model = models::build_model(
      read_spec("model",
                "{type: multi_head, backbone: [{type: linear, out: 3}], heads: ["
                "{name: fine, layers: [{type: linear, out: 4}], loss: cross_entropy}, "
                "{name: coarse, layers: [{type: linear, out: 2}], loss: cross_entropy, "
                "target: coarse_label}]}"),
      {4});
  Objective objective = objective_for(*model);
  EXPECT_NO_THROW(objective.check_targets({"coarse_label"}, "train"));
  try {
    objective.check_targets({"size"}, "val");
    FAIL() << "no error for a missing target";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.heads[1].target");
    EXPECT_THAT(e.what(), HasSubstr("the val data has no target \"coarse_label\"; it has: "
                                    "target, input, size"));
  }
}

}  // namespace objective_test
}  // namespace kiln::engine
