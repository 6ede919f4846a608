#pragma once
// Standard test functions of hyper-parameter search, evaluated instantly, for comparing samplers
// (`kiln tune benchmark`, benchmarks/tune.sh): Branin (2-D), Hartmann-6 and a conditional space
// mixing a choice, a log-scale real and a log-scale int. Each is minimised.
// Torch-free. Thread-safety: immutable.

#include <functional>
#include <string>
#include <vector>

#include "kiln/tune/sampler.h"

namespace kiln::tune {

struct TestFunction {
  std::string name;
  std::string space;  // tune.space as YAML
  std::function<double(const Json& values)> evaluate;
  double minimum;  // the global minimum
};

/// branin, hartmann6, conditional.
const std::vector<TestFunction>& test_functions();
/// Throws UsageError listing the names when there is none called `name`.
const TestFunction& test_function(const std::string& name);

struct SamplerRun {
  std::vector<double> best_after;  // the best value after each trial
  double sampling_seconds = 0;     // spent in the sampler, all trials together
};

/// `trials` sequential trials of `sampler` on `function`.
SamplerRun run_sampler(const TestFunction& function, Sampler& sampler, int64_t trials);

}  // namespace kiln::tune
