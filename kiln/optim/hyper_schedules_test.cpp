// Hyper-parameter schedules: the value changes exactly at epoch boundaries, every parameter group
// scales from its own base value, and what an optimizer lacks (or a value out of range, or a
// schedule that reacts to validation) is a config error naming schedules.NAME.

#include "kiln/optim/hyper_schedules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/optimizer.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace hyper_schedules_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Fixture {
  explicit Fixture(const std::string& optimizer_yaml)
      : parameter(torch::zeros({2}, torch::requires_grad())),
        optimizer(optimizer_registry().create(read_spec("optimizer", optimizer_yaml),
                                              std::vector<torch::Tensor>{parameter})) {}
  std::unique_ptr<Scheduler> schedule(const std::string& yaml, ScheduleSpan span = {12, 4, 8}) {
    return scheduler_registry().create(read_spec("scheduler", yaml), span);
  }
  torch::Tensor parameter;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

std::string error_driving(Fixture& f, const std::string& name, const Scheduler& schedule,
                          int64_t total_steps = 12) {
  try {
    ScheduledHyperParameters driven(*f.optimizer, {{name, &schedule}}, 4, total_steps);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HyperSchedules, EachOptimizerOffersWhatItHas) {
  EXPECT_THAT(schedulable_hyper_parameters(*Fixture("sgd").optimizer),
              ElementsAre("dampening", "momentum", "weight_decay"));
  EXPECT_THAT(schedulable_hyper_parameters(*Fixture("adam").optimizer),
              ElementsAre("beta1", "beta2", "eps", "weight_decay"));
  EXPECT_THAT(schedulable_hyper_parameters(*Fixture("adamw").optimizer),
              ElementsAre("beta1", "beta2", "eps", "weight_decay"));
  EXPECT_THAT(schedulable_hyper_parameters(*Fixture("rmsprop").optimizer),
              ElementsAre("alpha", "eps", "momentum", "weight_decay"));
  EXPECT_THAT(schedulable_hyper_parameters(*Fixture("adagrad").optimizer),
              ElementsAre("eps", "lr_decay", "weight_decay"));
}

// Every knob sets the option it is named after (and not the learning rate).
TEST(HyperSchedules, EachKnobDrivesItsOwnOption) {
  struct Case {
    const char* optimizer;
    const char* knob;
    std::function<double(torch::optim::OptimizerOptions&)> read;
  };
  namespace o = torch::optim;
  std::vector<Case> cases = {
      {"{type: sgd, momentum: 0.9, dampening: 0.2}", "dampening",
       [](auto& x) { return static_cast<o::SGDOptions&>(x).dampening(); }},
      {"{type: adam, eps: 1.0e-6}", "eps",
       [](auto& x) { return static_cast<o::AdamOptions&>(x).eps(); }},
      {"{type: adamw, eps: 1.0e-6}", "eps",
       [](auto& x) { return static_cast<o::AdamWOptions&>(x).eps(); }},
      {"{type: rmsprop, alpha: 0.9}", "alpha",
       [](auto& x) { return static_cast<o::RMSpropOptions&>(x).alpha(); }},
      {"{type: rmsprop, eps: 1.0e-6}", "eps",
       [](auto& x) { return static_cast<o::RMSpropOptions&>(x).eps(); }},
      {"{type: adagrad, lr_decay: 0.2}", "lr_decay",
       [](auto& x) { return static_cast<o::AdagradOptions&>(x).lr_decay(); }},
      {"{type: adagrad, eps: 1.0e-6}", "eps",
       [](auto& x) { return static_cast<o::AdagradOptions&>(x).eps(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.optimizer) + " " + c.knob);
    Fixture f(c.optimizer);
    auto& options = f.optimizer->param_groups()[0].options();
    double base = c.read(options), lr = options.get_lr();
    auto halving = f.schedule("{type: step, step_size: 1 epoch, gamma: 0.5}");
    ScheduledHyperParameters driven(*f.optimizer, {{c.knob, halving.get()}}, 4);
    driven.apply(0);
    EXPECT_EQ(c.read(options), base);
    driven.apply(4);
    EXPECT_EQ(c.read(options), base * 0.5);
    EXPECT_EQ(options.get_lr(), lr);
  }
}

TEST(HyperSchedules, ChangeExactlyAtEpochBoundaries) {
  Fixture f("{type: sgd, weight_decay: 0.01, momentum: 0.9}");
  auto halving = f.schedule("{type: step, step_size: 1 epoch, gamma: 0.5}");
  ScheduledHyperParameters driven(*f.optimizer, {{"weight_decay", halving.get()}}, 4);
  auto& options = static_cast<torch::optim::SGDOptions&>(f.optimizer->param_groups()[0].options());
  std::vector<double> seen;
  for (int64_t steps = 0; steps < 12; ++steps) {
    driven.apply(steps);
    seen.push_back(options.weight_decay());
  }
  EXPECT_THAT(seen, ElementsAre(0.01, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005, 0.005, 0.0025, 0.0025,
                                0.0025, 0.0025));
  EXPECT_EQ(options.momentum(), 0.9);  // not scheduled: untouched
  EXPECT_EQ(driven.values(), (std::map<std::string, double>{{"weight_decay", 0.0025}}));
}

TEST(HyperSchedules, AShapedScheduleIsReadAtTheEpochsFirstStep) {
  Fixture f("{type: adamw, weight_decay: 0.1}");
  auto cosine = f.schedule("cosine");  // over 12 steps of 4 per epoch
  ScheduledHyperParameters driven(*f.optimizer, {{"weight_decay", cosine.get()}}, 4, 12);
  for (int64_t steps : {4, 5, 7}) {
    driven.apply(steps);
    EXPECT_DOUBLE_EQ(driven.values().at("weight_decay"), 0.1 * cosine->factor(4)) << steps;
  }
  driven.apply(0);  // from the base value again, not from the last one set
  EXPECT_DOUBLE_EQ(driven.values().at("weight_decay"), 0.1);
}

TEST(HyperSchedules, EveryGroupScalesFromItsOwnBaseAndBetasSeparately) {
  torch::Tensor a = torch::zeros({1}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{a},
                      std::make_unique<torch::optim::AdamOptions>(
                          torch::optim::AdamOptions(0.1).betas({0.9, 0.99})));
  groups.emplace_back(std::vector<torch::Tensor>{b},
                      std::make_unique<torch::optim::AdamOptions>(
                          torch::optim::AdamOptions(0.1).betas({0.8, 0.99})));
  torch::optim::Adam adam(groups, torch::optim::AdamOptions(0.1));
  auto halving = scheduler_registry().create(
      read_spec("scheduler", "{type: step, step_size: 1 epoch, gamma: 0.5}"), {8, 4, 8});
  ScheduledHyperParameters driven(adam, {{"beta1", halving.get()}}, 4, 8);
  driven.apply(4);
  auto betas = [&](size_t i) {
    return static_cast<torch::optim::AdamOptions&>(adam.param_groups()[i].options()).betas();
  };
  EXPECT_EQ(betas(0), std::make_tuple(0.45, 0.99));
  EXPECT_EQ(betas(1), std::make_tuple(0.4, 0.99));
}

TEST(HyperSchedules, ANameTheOptimizerLacksListsTheOnesItHas) {
  Fixture f("adam");
  auto cosine = f.schedule("cosine");
  EXPECT_THAT(error_driving(f, "momentum", *cosine),
              HasSubstr("config error at schedules.momentum: this optimizer has no \"momentum\"; "
                        "it has: beta1, beta2, eps, weight_decay"));
  Fixture adagrad("adagrad");
  EXPECT_THAT(error_driving(adagrad, "beta1", *cosine),
              HasSubstr("schedules.beta1: this optimizer has no \"beta1\"; it has: eps, lr_decay, "
                        "weight_decay"));
}

TEST(HyperSchedules, RefuseAScheduleThatReactsToValidation) {
  Fixture f("sgd");
  auto plateau = f.schedule("reduce_on_plateau");
  EXPECT_THAT(
      error_driving(f, "weight_decay", *plateau),
      HasSubstr("schedules.weight_decay: a hyper-parameter follows a schedule of the step"));
}

TEST(HyperSchedules, ABetaScheduledToOneIsRefusedAhead) {
  Fixture f("adam");
  auto doubling = f.schedule("{type: step, step_size: 1 epoch, gamma: 1.2}");
  // 0.9, 1.08: the second epoch's beta1 would end Adam's averaging.
  EXPECT_THAT(error_driving(f, "beta1", *doubling),
              HasSubstr("schedules.beta1: the schedule takes beta1 to 1.08 at epoch 2; it must "
                        "stay below 1"));
  // A run of unknown length finds out when it gets there.
  ScheduledHyperParameters unknown(*f.optimizer, {{"beta1", doubling.get()}}, 4, 0);
  unknown.apply(3);
  EXPECT_THROW(unknown.apply(4), Error);
}

TEST(HyperSchedules, AnAlphaScheduledToOneIsRefusedAhead) {
  Fixture f("{type: rmsprop, alpha: 0.9}");
  auto growing = f.schedule("{type: step, step_size: 1 epoch, gamma: 1.2}");
  EXPECT_THAT(error_driving(f, "alpha", *growing),
              HasSubstr("schedules.alpha: the schedule takes alpha to 1.08 at epoch 2; it must "
                        "stay below 1"));
  auto shrinking = f.schedule("{type: step, step_size: 1 epoch, gamma: 0.5}");
  EXPECT_EQ(error_driving(f, "alpha", *shrinking), "no error");
}

TEST(HyperSchedules, RmspropMomentumMustNotStartAtZero) {
  Fixture f("{type: rmsprop, momentum: 0.9}");
  auto from_zero = f.schedule("{type: constant, warmup: 2 epochs, warmup_start: 0}");
  EXPECT_THAT(error_driving(f, "momentum", *from_zero),
              HasSubstr("schedules.momentum: rmsprop needs momentum > 0 at the first step"));
  auto from_half = f.schedule("{type: constant, warmup: 2 epochs, warmup_start: 0.5}");
  EXPECT_EQ(error_driving(f, "momentum", *from_half), "no error");
}

}  // namespace hyper_schedules_test
}  // namespace kiln::optim
