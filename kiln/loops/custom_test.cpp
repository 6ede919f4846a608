// The custom loop over a module whose training_step returns what the loop refuses
// (tests/golden/custom_step/bad_steps.pt, make_custom_step.py): each refusal names the file, the
// method and what is wrong, before anything is learnt from the step.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"
#include "kiln/models/torchscript_model.h"
#include "tests/support/matrix_model.h"

namespace kiln::loops {
namespace custom_test {

using engine::Loop;
using engine::loop_registry;
using engine::LoopSetup;
using ::testing::HasSubstr;

std::string golden(const std::string& file) {
  return std::string(KILN_GOLDEN_DIR) + "/custom_step/" + file;
}

std::unique_ptr<Loop> attached_custom(models::Model& model) {
  std::unique_ptr<Loop> loop =
      loop_registry().create(ComponentSpec("loop", Json{{"type", "custom"}}));
  loop->type = "custom";
  loop->config_path = "loop";
  loop->attach(LoopSetup{model, torch::kCPU, {4}, nullptr, nullptr});
  return loop;
}

// What batch_loss throws for a batch whose first target is `case_number`.
std::string refusal(int64_t case_number) {
  auto model = models::build_model(
      ComponentSpec("model", Json{{"type", "torchscript"}, {"file", golden("bad_steps.pt")}}),
      models::Shape{4});
  std::unique_ptr<Loop> loop = attached_custom(*model);
  engine::Objective objective = testing::cross_entropy_objective();
  data::Batch batch;
  batch.input = torch::ones({2, 4});
  batch.target = torch::full({2}, case_number, torch::kLong);
  try {
    loop->batch_loss(*model, objective, batch);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CustomLoop, WhatAStepReturnsWrongIsNamed) {
  std::string at = golden("bad_steps.pt") + ": training_step";
  EXPECT_THAT(refusal(0),
              HasSubstr(golden("bad_steps.pt") + ": training_step returns no \"loss\""));
  EXPECT_THAT(refusal(1), HasSubstr(at + " returns \"pair\" as Tensor; each value is one number"));
  EXPECT_THAT(refusal(2), HasSubstr("training_step's loss has no gradient"));
  EXPECT_THAT(refusal(3), HasSubstr(at + " returns a value named \"a b\""));
  EXPECT_THAT(refusal(4), HasSubstr(at + " failed: "));
  EXPECT_THAT(refusal(4), HasSubstr("the step gave up"));
}

TEST(CustomLoop, AModelOfKilnsLayersOrWithoutATrainingStepIsAConfigError) {
  testing::MatrixModel matrix(torch::zeros({3, 4}));
  EXPECT_THROW(attached_custom(matrix), ConfigError);
  auto plain = models::build_model(
      ComponentSpec("model", Json{{"type", "torchscript"}, {"file", golden("no_step.pt")}}),
      models::Shape{4});
  try {
    attached_custom(*plain);
    ADD_FAILURE() << "a module without training_step was taken";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.file");
  }
}

}  // namespace custom_test
}  // namespace kiln::loops
