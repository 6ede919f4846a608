// The options of rmsprop and adagrad refuse malformed values with a message naming the config
// path and what would be valid, before LibTorch's own checks could fail later.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/optimizer.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace optimizer_options_test {

using ::testing::HasSubstr;

std::string error_reading(const std::string& config) {
  try {
    read_spec("optimizer", config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

struct BadOption {
  const char* config;
  const char* expected;
};

// Test names show the config, not the struct's bytes.
void PrintTo(const BadOption& bad, std::ostream* out) { *out << bad.config; }

class RefusedOptimizer : public ::testing::TestWithParam<BadOption> {};

TEST_P(RefusedOptimizer, NamesThePathAndTheFix) {
  EXPECT_THAT(error_reading(GetParam().config), HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Options, RefusedOptimizer,
    ::testing::Values(
        BadOption{"rmsprp", "unknown optimizer \"rmsprp\"; did you mean \"rmsprop\"?"},
        BadOption{"{type: rmsprop, lr: -0.1}",
                  "config error at optimizer.lr: expected number >= 0"},
        BadOption{"{type: rmsprop, alpha: 1.5}",
                  "config error at optimizer.alpha: expected number in [0, 1]"},
        BadOption{"{type: rmsprop, eps: -1}",
                  "config error at optimizer.eps: expected number >= 0"},
        BadOption{"{type: rmsprop, momentum: -0.9}",
                  "config error at optimizer.momentum: expected number >= 0"},
        BadOption{"{type: rmsprop, centered: maybe}",
                  "config error at optimizer.centered: expected boolean"},
        BadOption{"{type: rmsprop, weight_decay: -1}",
                  "config error at optimizer.weight_decay: expected number >= 0"},
        BadOption{"{type: rmsprop, betas: [0.9, 0.99]}",
                  "config error at optimizer.betas: unknown key"},
        BadOption{"{type: adagrad, lr: fast}", "config error at optimizer.lr"},
        BadOption{"{type: adagrad, lr_decay: -0.1}",
                  "config error at optimizer.lr_decay: expected number >= 0"},
        BadOption{"{type: adagrad, eps: -1e-10}",
                  "config error at optimizer.eps: expected number >= 0"},
        BadOption{"{type: adagrad, weight_decay: -2}",
                  "config error at optimizer.weight_decay: expected number >= 0"},
        BadOption{"{type: adagrad, initial_accumulator_value: -0.5}",
                  "config error at optimizer.initial_accumulator_value: expected number >= 0"},
        BadOption{"{type: adagrad, initial_accumulator: 0.5}",
                  "did you mean \"initial_accumulator_value\"?"}));

}  // namespace optimizer_options_test
}  // namespace kiln::optim
