#include "kiln/tune/test_functions.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "kiln/core/config.h"
#include "kiln/core/error.h"

namespace kiln::tune {
namespace {

double branin(const Json& v) {
  double x1 = v["x1"].get<double>(), x2 = v["x2"].get<double>();
  double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  double inner = x2 - b * x1 * x1 + c * x1 - 6;
  return inner * inner + 10 * (1 - t) * std::cos(x1) + 10;
}

double hartmann6(const Json& v) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      double d = v[fmt::format("x{}", j + 1)].get<double>() - p[i][j] * 1e-4;
      inner += a[i][j] * d * d;
    }
    sum += alpha[i] * std::exp(-inner);
  }
  return -sum;
}

double conditional(const Json& v) {
  if (v["kind"] == "bowl") {
    double x = v["x"].get<double>();
    return (x - 1) * (x - 1);
  }
  double lr = std::log10(v["lr"].get<double>()) + 2;
  return lr * lr + 0.05 * std::abs(std::log2(v["width"].get<double>()) - 4) + 0.25;
}

}  // namespace

const std::vector<TestFunction>& test_functions() {
  static const std::vector<TestFunction> functions = {
      {"branin", "x1: {type: uniform, low: -5, high: 10}\nx2: {type: uniform, low: 0, high: 15}\n",
       branin, 0.397887},
      {"hartmann6",
       "x1: {type: uniform, low: 0, high: 1}\nx2: {type: uniform, low: 0, high: 1}\n"
       "x3: {type: uniform, low: 0, high: 1}\nx4: {type: uniform, low: 0, high: 1}\n"
       "x5: {type: uniform, low: 0, high: 1}\nx6: {type: uniform, low: 0, high: 1}\n",
       hartmann6, -3.32237},
      {"conditional",
       "kind: {type: choice, values: [bowl, valley]}\n"
       "x: {type: uniform, low: -5, high: 5, when: {kind: bowl}}\n"
       "lr: {type: loguniform, low: 1.0e-4, high: 1, when: {kind: valley}}\n"
       "width: {type: int, low: 1, high: 64, log: true, when: {kind: valley}}\n",
       conditional, 0},
  };
  return functions;
}

const TestFunction& test_function(const std::string& name) {
  std::string names;
  for (const TestFunction& f : test_functions()) {
    if (f.name == name) return f;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  throw UsageError(fmt::format("no test function \"{}\"; known: {}", name, names));
}

SamplerRun run_sampler(const TestFunction& function, Sampler& sampler, int64_t trials) {
  SearchSpace space = SearchSpace::read(parse_config_text(function.space, function.name, false),
                                        {"tune.space", nullptr});
  SamplerRun run;
  std::vector<TrialView> done;
  double best = INFINITY;
  for (int64_t n = 0; n < trials; ++n) {
    auto started = std::chrono::steady_clock::now();
    std::optional<Assignment> assignment = sampler.sample(space, done, n);
    run.sampling_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!assignment) break;
    double value = function.evaluate(space.values(*assignment));
    done.push_back({n, TrialState::kComplete, *assignment, value});
    best = std::min(best, value);
    run.best_after.push_back(best);
  }
  return run;
}

}  // namespace kiln::tune
