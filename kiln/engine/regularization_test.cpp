// Regularization: which parameters an entry selects (patterns, 1-D ones only with vectors, never
// frozen ones), config errors that name the entry's key (and a stage's), and in training: an l2
// step of SGD equals weight decay of twice its weight, once per step whatever the accumulation,
// with the penalty logged as train/regularization and train/loss left the data loss.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/regularization.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace regularization_test {

using test_rig::regularizer_entries;
using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

torch::OrderedDict<std::string, torch::Tensor> small_network() {
  torch::OrderedDict<std::string, torch::Tensor> parameters;
  parameters.insert("hidden.weight", torch::full({2, 3}, 2.0).requires_grad_());
  parameters.insert("hidden.bias", torch::full({2}, 1.0).requires_grad_());
  parameters.insert("out.weight", torch::full({1, 2}, 3.0).requires_grad_());
  parameters.insert("frozen.weight", torch::full({2, 2}, 5.0));  // requires_grad false
  return parameters;
}

std::string error_building(const std::vector<std::string>& yaml) {
  try {
    Regularization(regularizer_entries(yaml), small_network());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

double penalty_of(const std::vector<std::string>& yaml) {
  return Regularization(regularizer_entries(yaml), small_network()).penalty().item<double>();
}

TEST(Regularization, SelectsTrainableMatricesByDefaultAndVectorsWhenAsked) {
  // hidden.weight 6 x 4 + out.weight 2 x 9; the bias and the frozen matrix are left out.
  EXPECT_DOUBLE_EQ(penalty_of({"{type: l2, weight: 0.5}"}), 0.5 * (24 + 18));
  EXPECT_DOUBLE_EQ(penalty_of({"{type: l1, weight: 1, vectors: true}"}), 12 + 2 + 6);
  // A parameter two patterns match counts once.
  EXPECT_DOUBLE_EQ(penalty_of({"{type: l1, weight: 1, params: [hidden.*, '*.weight']}"}), 12 + 6);
  EXPECT_DOUBLE_EQ(penalty_of({"{type: l1, weight: 1}", "{type: l2, weight: 1}"}),
                   (12 + 6) + (24 + 18));
  EXPECT_TRUE(Regularization(regularizer_entries({}), small_network()).empty());
}

TEST(Regularization, APatternThatSelectsNothingNamesItsKeyAndWhy) {
  std::string typo = error_building({"{type: l2, weight: 1}",
                                     "{type: l1, weight: 1, "
                                     "params: [out.weight, hiden.*]}"});
  EXPECT_THAT(typo, HasSubstr("config error at regularization[1].params[1]"));
  EXPECT_THAT(typo, HasSubstr("\"hiden.*\" matches no trainable parameter"));
  EXPECT_THAT(typo, HasSubstr("known: hidden.weight, hidden.bias, out.weight"));  // not frozen
  std::string vector = error_building({"{type: l2, weight: 1, params: ['*.bias']}"});
  EXPECT_THAT(vector, HasSubstr("regularization[0].params[0]"));
  EXPECT_THAT(vector, HasSubstr("only 1-D parameters (hidden.bias); set vectors: true"));
  std::string frozen = error_building({"{type: l2, weight: 1, params: [frozen.*]}"});
  EXPECT_THAT(frozen, HasSubstr("\"frozen.*\" matches only frozen parameters (frozen.weight, "
                                "train.freeze)"));
}

TEST(Regularization, TheWeightIsRequiredAndPositive) {
  EXPECT_THROW(read_spec("regularizer", "l2"), ConfigError);
  try {
    read_spec("regularizer", "{type: l1, weight: 0}", "regularization[0]");
    FAIL() << "a zero weight was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("regularization[0].weight"));
    EXPECT_THAT(e.what(), HasSubstr("> 0"));
  }
  try {
    read_spec("regularizer", "{type: l2, weight: 1, params: []}", "regularization[0]");
    FAIL() << "an entry without patterns was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("regularization[0].params"));
    EXPECT_THAT(e.what(), HasSubstr("at least one pattern"));
  }
  try {
    read_spec("regularizer", "{type: l3, weight: 1}");
    FAIL() << "an unknown regularizer was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean"));
  }
}

// The rig's model is one linear layer, 4 -> 3 (weight and bias); batches of 2, 4 per epoch.
std::unique_ptr<TrainerRig> seeded_rig(const std::string& optimizer) {
  torch::manual_seed(11);
  return std::make_unique<TrainerRig>(8, 0, optimizer);
}

TEST(TrainerRegularization, AnL2StepOfSgdIsWeightDecayOfTwiceItsWeight) {
  for (int64_t accumulate : {1, 2}) {
    SCOPED_TRACE("accumulate " + std::to_string(accumulate));
    TrainOptions options = train_options("4 steps", "100 steps", "1 step");
    options.monitor = "train/loss";
    options.accumulate = accumulate;
    auto regularized = seeded_rig("{type: sgd, lr: 0.1}");
    regularized->regularizers = {"{type: l2, weight: 0.05, vectors: true}"};
    double start_penalty = 0;
    for (const auto& parameter : regularized->model->parameters())
      start_penalty += 0.05 * parameter.square().sum().item<double>();
    regularized->fit(options);
    auto decayed = seeded_rig("{type: sgd, lr: 0.1, weight_decay: 0.1}");
    decayed->fit(options);
    auto plain = seeded_rig("{type: sgd, lr: 0.1}");
    plain->fit(options);
    for (size_t i = 0; i < 2; ++i)
      EXPECT_TRUE(torch::allclose(regularized->model->parameters()[i],
                                  decayed->model->parameters()[i], 1e-5, 1e-7));
    EXPECT_FALSE(torch::allclose(regularized->model->parameters()[0], plain->model->parameters()[0],
                                 1e-5, 1e-7));
    // Logged apart: the first step's data loss is the unregularized run's, and the penalty is
    // that of the starting weights (weight and bias together).
    ASSERT_EQ(regularized->values_logged("train/regularization").size(), 4u);
    EXPECT_DOUBLE_EQ(regularized->values_logged("train/loss").front(),
                     plain->values_logged("train/loss").front());
    EXPECT_NEAR(regularized->values_logged("train/regularization").front(), start_penalty,
                1e-6 * start_penalty);
    EXPECT_TRUE(plain->values_logged("train/regularization").empty());
  }
}

TEST(TrainerRegularization, ASkippedStepLogsNoPenalty) {
  auto rig = seeded_rig("{type: sgd, lr: 0.1}");
  rig->loss = std::make_unique<test_rig::PoisonedLoss>(3, /*once=*/true);
  rig->regularizers = {"{type: l2, weight: 0.05}"};
  TrainOptions options = train_options("4 steps", "100 steps", "1 step");
  options.monitor = "train/loss";
  options.on_nan = OnNan::kSkipStep;
  rig->fit(options);
  // Step 3 made no update: its penalty joined no loss that trained, so none is logged for it.
  EXPECT_THAT(rig->steps_logged("train/regularization"), ElementsAre(1, 2, 4));
  EXPECT_THAT(rig->steps_logged("train/skipped_steps"), ElementsAre(3, 4));  // so far, each log
}

}  // namespace regularization_test
}  // namespace kiln::engine
