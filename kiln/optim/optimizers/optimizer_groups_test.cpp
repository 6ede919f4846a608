// Every registered optimizer honours parameter groups (train.lr_scales) and scheduled learning
// rates: a group at scale s moves exactly as the same optimizer alone at lr x s would, and a rate
// set through ScheduledLearningRates is the one the step uses and current_lr reports.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/optimizer.h"
#include "kiln/optim/param_groups.h"
#include "kiln/optim/scheduler.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace optimizer_groups_test {

using Named = torch::OrderedDict<std::string, torch::Tensor>;

// Spec texts with options that make each optimizer's state matter (momentum, accumulators).
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table = {
      {"adagrad", "{type: adagrad, lr: 0.1, lr_decay: 0.1, initial_accumulator_value: 0.2}"},
      {"adam", "{type: adam, lr: 0.05}"},
      {"adamw", "{type: adamw, lr: 0.05}"},
      {"rmsprop", "{type: rmsprop, lr: 0.05, momentum: 0.5, centered: true}"},
      {"sgd", "{type: sgd, lr: 0.1, momentum: 0.9}"},
  };
  return table;
}

torch::Tensor gradient(int step) { return torch::tensor({0.5f, -1.0f, 2.0f}) / double(step + 1); }

// The parameter after three steps of `spec` with its lr times `scale`, alone.
torch::Tensor alone(const std::string& spec, double scale) {
  torch::Tensor p = torch::ones({3}, torch::requires_grad());
  auto optimizer = optimizer_registry().create(read_spec("optimizer", spec), {p});
  for (auto& group : optimizer->param_groups())
    group.options().set_lr(group.options().get_lr() * scale);
  for (int step = 0; step < 3; ++step) {
    p.mutable_grad() = gradient(step);
    optimizer->step();
  }
  return p.detach();
}

TEST(OptimizerGroups, EveryOptimizerHasAnExample) {
  for (const auto& name : optimizer_registry().names())
    EXPECT_TRUE(examples().count(name)) << "optimizer \"" << name << "\" has no example here";
}

class GroupedOptimizer : public ::testing::TestWithParam<std::string> {};

TEST_P(GroupedOptimizer, EachGroupMovesAsAtItsOwnRate) {
  const std::string& spec = examples().at(GetParam());
  Named named;
  named.insert("head.weight", torch::ones({3}, torch::requires_grad()));
  named.insert("backbone.weight", torch::ones({3}, torch::requires_grad()));
  auto optimizer = build_grouped_optimizer(read_spec("optimizer", spec), named,
                                           {{"backbone.*", 0.25}}, "train.lr_scales");
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  for (int step = 0; step < 3; ++step) {
    for (auto& item : named) item.value().mutable_grad() = gradient(step);
    optimizer->step();
  }
  EXPECT_TRUE(torch::allclose(named["head.weight"], alone(spec, 1.0)));
  EXPECT_TRUE(torch::allclose(named["backbone.weight"], alone(spec, 0.25)));
  EXPECT_FALSE(torch::allclose(named["backbone.weight"], named["head.weight"]));
}

TEST_P(GroupedOptimizer, ScheduledRatesAreUsedAndReported) {
  const std::string& spec = examples().at(GetParam());
  torch::Tensor p = torch::ones({3}, torch::requires_grad());
  auto optimizer = optimizer_registry().create(read_spec("optimizer", spec), {p});
  double base = current_lr(*optimizer);
  auto halving = scheduler_registry().create(
      read_spec("scheduler", "{type: step, step_size: 1 step, gamma: 0.5}"), {10, 5, 1});
  ScheduledLearningRates rates(*optimizer, *halving);
  rates.apply(1);
  EXPECT_DOUBLE_EQ(current_lr(*optimizer), base * 0.5);
  for (int step = 0; step < 3; ++step) {
    p.mutable_grad() = gradient(step);
    optimizer->step();
  }
  EXPECT_TRUE(torch::allclose(p, alone(spec, 0.5)));
}

INSTANTIATE_TEST_SUITE_P(Registered, GroupedOptimizer,
                         ::testing::Values("adagrad", "adam", "adamw", "rmsprop", "sgd"),
                         [](const auto& info) { return info.param; });

}  // namespace optimizer_groups_test
}  // namespace kiln::optim
