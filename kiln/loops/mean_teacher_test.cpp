// The mean teacher loop against PyTorch (tests/golden/loops.json, make_loops_golden.py): the
// teacher's average after an update, and the loss and gradient of a batch with unlabelled rows;
// what a checkpoint keeps of it, and what it refuses to read back.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"
#include "tests/golden/golden.h"
#include "tests/support/matrix_model.h"

namespace kiln::loops {
namespace mean_teacher_test {

using engine::FrozenModel;
using engine::Loop;
using engine::loop_registry;
using engine::LoopSetup;
using engine::MetricValues;
using engine::Objective;
using testing::cross_entropy_objective;
using ::testing::HasSubstr;
using testing::MatrixModel;

// The loop of `config` over `student`, its teacher a MatrixModel of the student's shape.
std::unique_ptr<Loop> attached_loop(const std::string& config, MatrixModel& student) {
  std::unique_ptr<Loop> loop = loop_registry().create(read_spec("loop", config));
  loop->type = "mean_teacher";
  loop->config_path = "loop";
  auto shape = student.weight_.sizes().vec();
  LoopSetup setup{student,
                  torch::kCPU,
                  {shape[0]},
                  [shape] { return std::make_shared<MatrixModel>(torch::zeros(shape)); },
                  nullptr};
  loop->attach(setup);
  return loop;
}

TEST(GoldenMeanTeacher, TheAverageTheLossAndTheGradientMatchPyTorch) {
  Json cases = golden::load_golden("loops.json").at("mean_teacher");
  EXPECT_EQ(golden::case_names_in(cases),
            (std::vector<std::string>{"ramping", "decay_below_warm_start"}));
  for (const Json& golden_case : cases) {
    SCOPED_TRACE(golden_case.at("name").get<std::string>());
    MatrixModel student(golden::tensor_from(golden_case.at("initial")));
    auto loop = attached_loop(golden_case.at("config").get<std::string>(), student);
    student.set(golden::tensor_from(golden_case.at("student")));
    loop->after_update(student);
    ASSERT_NE(loop->evaluation_weights(), nullptr);
    EXPECT_TRUE(golden::all_close(loop->evaluation_weights()->at("weight"),
                                  golden::tensor_from(golden_case.at("teacher"))));
    Objective objective = cross_entropy_objective();
    data::Batch batch;
    batch.input = golden::tensor_from(golden_case.at("input"));
    batch.target = torch::tensor(golden_case.at("target").get<std::vector<int64_t>>());
    torch::Tensor loss = loop->batch_loss(student, objective, batch);
    loss.backward();
    EXPECT_TRUE(golden::all_close(loss, torch::tensor(golden_case.at("loss").get<double>())));
    EXPECT_TRUE(
        golden::all_close(student.weight_.grad(), golden::tensor_from(golden_case.at("grad"))));
    EXPECT_TRUE(torch::equal(loop->counted_loss(objective), loss.detach()));
    // train/loss is the labelled rows' loss alone; the loop logs the consistency and its weight.
    EXPECT_NEAR(objective.values("train").at("train/loss"),
                golden_case.at("hard_loss").get<double>(), 1e-5);
    MetricValues logged = loop->take_values(*distributed::single_process());
    EXPECT_NEAR(logged.at("train/mean_teacher/consistency"),
                golden_case.at("consistency").get<double>(), 1e-6);
    EXPECT_NEAR(logged.at("train/mean_teacher/consistency_weight"),
                golden_case.at("weight").get<double>(), 1e-9);
  }
}

TEST(MeanTeacher, ABatchWithoutLabelsCostsItsConsistencyAlone) {
  torch::manual_seed(2);
  MatrixModel student(torch::randn({5, 3}));
  auto loop =
      attached_loop("{type: mean_teacher, rampup_steps: 0, consistency: 2, noise: 0}", student);
  student.set(torch::randn({5, 3}));
  loop->after_update(student);
  Objective objective = cross_entropy_objective();
  data::Batch batch;
  batch.input = torch::randn({4, 5});
  batch.target = torch::full({4}, -1, torch::kInt64);
  torch::Tensor loss = loop->batch_loss(student, objective, batch);
  double consistency =
      loop->take_values(*distributed::single_process()).at("train/mean_teacher/consistency");
  EXPECT_GT(consistency, 0);
  EXPECT_NEAR(loss.item<double>(), 2 * consistency, 1e-6);
  EXPECT_FALSE(objective.saw_examples()) << "no labelled row, no data loss counted";
}

TEST(MeanTeacher, ACheckpointKeepsTheTeacherAndItsUpdatesAndRefusesDamage) {
  torch::manual_seed(3);
  MatrixModel student(torch::randn({5, 3}));
  auto loop = attached_loop("{type: mean_teacher, noise: 0}", student);
  for (int i = 0; i < 3; ++i) {
    student.set(torch::randn({5, 3}));
    loop->after_update(student);
  }
  EXPECT_EQ(loop->tensor_file(), "ema") << "eval and export take the teacher's weights";
  MatrixModel other(torch::zeros({5, 3}));
  auto resumed = attached_loop("{type: mean_teacher, noise: 0}", other);
  resumed->load_state(loop->state(), "train_state.json");
  resumed->load_tensors(loop->tensors());
  EXPECT_TRUE(torch::equal(resumed->evaluation_weights()->at("weight"),
                           loop->evaluation_weights()->at("weight")));
  EXPECT_EQ(resumed->state(), loop->state());
  try {
    resumed->load_state(Json{{"updates", -4}}, "step-9/train_state.json");
    FAIL() << "a negative count of updates";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("step-9/train_state.json"));
    EXPECT_THAT(e.what(), HasSubstr("loop.updates"));
  }
  EXPECT_THROW(resumed->load_tensors({{"weight", torch::zeros({3, 5})}}), Error);
  EXPECT_THROW(resumed->load_tensors({}), Error);
}

TEST(MeanTeacher, AModelOfNoClassLogitsIsRefused) {
  MatrixModel regression(torch::zeros({5, 1}));
  try {
    attached_loop("{type: mean_teacher}", regression);
    FAIL() << "a model of one output value";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "loop");
  }
}

}  // namespace mean_teacher_test
}  // namespace kiln::loops
