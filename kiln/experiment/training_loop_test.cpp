// A loop's state across the stages of a run: the next stage's loop of the same type takes up what
// the one before kept (a mean teacher's average and its count of updates); a loop of another type
// starts afresh.

#include <gtest/gtest.h>

#include "kiln/experiment/training_loop.h"
#include "tests/support/matrix_model.h"

namespace kiln::experiment {
namespace training_loop_test {

using engine::Loop;
using testing::MatrixModel;

std::unique_ptr<Loop> attached(const std::string& config, MatrixModel& model) {
  std::unique_ptr<Loop> loop = engine::loop_registry().create(read_spec("loop", config));
  loop->type = loop->config_path = read_spec("loop", config).type();
  auto shape = model.weight_.sizes().vec();
  loop->attach(
      engine::LoopSetup{model,
                        torch::kCPU,
                        {shape[0]},
                        [shape] { return std::make_shared<MatrixModel>(torch::zeros(shape)); },
                        nullptr});
  return loop;
}

TEST(LoopCarry, TheNextStagesMeanTeacherGoesOnFromTheAverageTheStageBeforeKept) {
  MatrixModel student(torch::ones({3, 2}));
  auto first = attached("{type: mean_teacher, ema_decay: 0.5}", student);
  student.set(torch::full({3, 2}, 3.0));
  first->after_update(student);  // the average: (1 + 3) / 2 after the first update
  LoopCarry carried = loop_carry(*first);

  student.set(torch::full({3, 2}, 7.0));
  auto next = attached("{type: mean_teacher, ema_decay: 0.5}", student);
  EXPECT_TRUE(torch::equal(next->evaluation_weights()->at("weight"), torch::full({3, 2}, 7.0)));
  take_up(*next, carried);
  EXPECT_TRUE(torch::equal(next->evaluation_weights()->at("weight"), torch::full({3, 2}, 2.0)));
  EXPECT_EQ(next->state(), first->state());  // the count of updates, which the decay warms with
}

TEST(LoopCarry, ALoopOfAnotherTypeStartsAfresh) {
  MatrixModel student(torch::ones({3, 2}));
  auto first = attached("{type: mean_teacher}", student);
  student.set(torch::full({3, 2}, 5.0));
  auto next = attached("supervised", student);
  take_up(*next, loop_carry(*first));  // nothing to take: no throw, no state
  EXPECT_EQ(next->state(), Json::object());
  auto teacher = attached("{type: mean_teacher}", student);
  take_up(*teacher, std::nullopt);
  EXPECT_TRUE(torch::equal(teacher->evaluation_weights()->at("weight"), torch::full({3, 2}, 5.0)));
}

}  // namespace training_loop_test
}  // namespace kiln::experiment
