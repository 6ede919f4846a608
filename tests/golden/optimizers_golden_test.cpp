// sgd, adam, adamw, rmsprop and adagrad against torch.optim: the same parameter, the same five
// gradients, the parameter compared after every step (optimizers.json, written by make_golden.py).

#include <gtest/gtest.h>

#include "kiln/optim/optimizer.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace optimizers_golden_test {

// The cases make_golden.py writes, named here so each is its own test.
const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {
      "sgd_plain",         "sgd_momentum_dampening_decay",
      "sgd_nesterov",      "adam_defaults",
      "adam_weight_decay", "adam_amsgrad",
      "adamw_defaults",    "adamw_weight_decay_amsgrad",
      "rmsprop_defaults",  "rmsprop_momentum_centered_decay",
      "adagrad_defaults",  "adagrad_lr_decay_accumulator",
  };
  return names;
}

const Json& golden_cases() {
  static const Json json = load_golden("optimizers.json");
  return json.at("cases");
}

class OptimizerVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerVsTorch, ParameterAfterEveryStep) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  torch::Tensor param = tensor_from(golden_case.at("initial")).requires_grad_();
  auto optimizer = optim::optimizer_registry().create(
      read_spec("optimizer", golden_case.at("config").get<std::string>()), {param});
  const Json& gradients = golden_case.at("gradients");
  ASSERT_EQ(gradients.size(), 5u);
  for (size_t step = 0; step < gradients.size(); ++step) {
    param.mutable_grad() = tensor_from(gradients[step]);
    optimizer->step();
    EXPECT_TRUE(all_close(param, tensor_from(golden_case.at("after_step")[step])))
        << "after step " << step + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, OptimizerVsTorch, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenOptimizerCases, EveryGeneratedCaseIsTested) {
  EXPECT_EQ(case_names_in(golden_cases()), case_names());
}

TEST(GoldenOptimizerCases, EveryRegisteredOptimizerHasACase) {
  for (const std::string& name : optim::optimizer_registry().names()) {
    bool found = false;
    for (const std::string& c : case_names()) found = found || c.rfind(name + "_", 0) == 0;
    EXPECT_TRUE(found) << name << " has no golden case in make_golden.py";
  }
}

}  // namespace optimizers_golden_test
}  // namespace kiln::golden
