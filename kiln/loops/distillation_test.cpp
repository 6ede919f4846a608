// The distillation loop against PyTorch (tests/golden/loops.json, make_loops_golden.py): the
// blended loss and the student's gradient for linear student and teacher models; its terms as
// logged; and the teachers and models it refuses before training.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"
#include "tests/golden/golden.h"
#include "tests/support/matrix_model.h"

namespace kiln::loops {
namespace distillation_test {

using ::testing::HasSubstr;

using engine::FrozenModel;
using engine::Loop;
using engine::loop_registry;
using engine::LoopSetup;
using engine::MetricValues;
using engine::Objective;
using testing::cross_entropy_objective;
using testing::MatrixModel;

// The loop of `config`, attached to `student` with a teacher of `teacher_weight` taking examples
// of `teacher_input`.
std::unique_ptr<Loop> attached_loop(const std::string& config, models::Model& student,
                                    const torch::Tensor& teacher_weight,
                                    std::vector<int64_t> teacher_input = {5}) {
  std::unique_ptr<Loop> loop = loop_registry().create(read_spec("loop", config));
  loop->type = "distillation";
  loop->config_path = "loop";
  LoopSetup setup{student, torch::kCPU, {5}, nullptr};
  setup.open_frozen = [&](const std::string& location, const std::string& which,
                          const std::string& config_path) {
    EXPECT_EQ(location, "a_run");
    EXPECT_EQ(which, "best");
    EXPECT_EQ(config_path, "loop.teacher");
    auto teacher = std::make_shared<MatrixModel>(teacher_weight);
    teacher->weight_.set_requires_grad(false);
    return FrozenModel{teacher, teacher_input};
  };
  loop->attach(setup);
  return loop;
}

TEST(GoldenDistillation, LossAndGradientMatchPyTorch) {
  Json cases = golden::load_golden("loops.json").at("distillation");
  EXPECT_EQ(golden::case_names_in(cases),
            (std::vector<std::string>{"blend", "soft_only_hot_teacher", "hard_only"}));
  for (const Json& golden_case : cases) {
    SCOPED_TRACE(golden_case.at("name").get<std::string>());
    MatrixModel student(golden::tensor_from(golden_case.at("student")));
    auto loop = attached_loop(golden_case.at("config").get<std::string>(), student,
                              golden::tensor_from(golden_case.at("teacher")));
    Objective objective = cross_entropy_objective();
    data::Batch batch{golden::tensor_from(golden_case.at("input")),
                      torch::tensor(golden_case.at("target").get<std::vector<int64_t>>()),
                      {},
                      {}};
    torch::Tensor loss = loop->batch_loss(student, objective, batch);
    loss.backward();
    EXPECT_TRUE(golden::all_close(loss, torch::tensor(golden_case.at("loss").get<double>())));
    EXPECT_TRUE(
        golden::all_close(student.weight_.grad(), golden::tensor_from(golden_case.at("grad"))));
    // train/loss stays the data's loss; the loop logs its soft term and the blend.
    EXPECT_NEAR(objective.values("train").at("train/loss"),
                golden_case.at("hard_loss").get<double>(), 1e-5);
    MetricValues logged = loop->take_values(*distributed::single_process());
    EXPECT_NEAR(logged.at("train/distillation/soft_loss"),
                golden_case.at("soft_loss").get<double>(), 1e-5);
    EXPECT_NEAR(logged.at("train/distillation/loss"), golden_case.at("loss").get<double>(), 1e-5);
    EXPECT_TRUE(loop->take_values(*distributed::single_process()).empty())
        << "taken values are forgotten";
  }
}

TEST(Distillation, ItsTermsAreMeansOverTheBatchesSinceTheyWereLastTaken) {
  torch::manual_seed(1);
  MatrixModel student(torch::randn({5, 3}));
  auto loop = attached_loop("{type: distillation, teacher: a_run}", student, torch::randn({5, 3}));
  Objective objective = cross_entropy_objective();
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    data::Batch batch{torch::randn({4, 5}), torch::tensor({0, 1, 2, 1}), {}, {}};
    sum += loop->batch_loss(student, objective, batch).item<double>();
  }
  EXPECT_NEAR(loop->take_values(*distributed::single_process()).at("train/distillation/loss"),
              sum / 3, 1e-5);
  EXPECT_THAT(loop->tags(),
              ::testing::ElementsAre("train/distillation/soft_loss", "train/distillation/loss"));
}

TEST(Distillation, ATeacherOfOtherInputsOrClassesIsRefusedAtItsPath) {
  MatrixModel student(torch::zeros({5, 3}));
  const std::string config = "{type: distillation, teacher: a_run}";
  try {
    attached_loop(config, student, torch::zeros({5, 4}));
    FAIL() << "a teacher of 4 classes for a student of 3";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "loop.teacher");
    EXPECT_THAT(e.what(), HasSubstr("the teacher gives [4] logits, the model [3]"));
  }
  try {
    attached_loop(config, student, torch::zeros({5, 3}), {2, 5});
    FAIL() << "a teacher of other examples";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "loop.teacher");
    EXPECT_THAT(e.what(), HasSubstr("takes examples of shape [2, 5], the training data's are [5]"));
  }
  // A model whose output is no vector of logits (here one number) has nothing to distil into.
  MatrixModel regression(torch::zeros({5, 1}));
  try {
    attached_loop(config, regression, torch::zeros({5, 1}));
    FAIL() << "a model of one output value";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "loop");
    EXPECT_THAT(e.what(), HasSubstr("one vector of class logits; this one gives [1]"));
  }
}

}  // namespace distillation_test
}  // namespace kiln::loops
