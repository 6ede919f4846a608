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

// Rosenbrock's valley in 10 dimensions, each in [-2.048, 2.048]: minimum 0 at (1, ..., 1), at the
// end of a long curved valley that a sampler must follow.
double rosenbrock10(const Json& v) {
  double sum = 0;
  for (int i = 1; i < 10; ++i) {
    double x = v[fmt::format("x{}", i)].get<double>(),
           next = v[fmt::format("x{}", i + 1)].get<double>();
    sum += 100 * (next - x * x) * (next - x * x) + (1 - x) * (1 - x);
  }
  return sum;
}

// Optuna's documented conditional space (its first tutorial: a classifier, SVC with a C from
// 1e-10 to 1e10 on a log scale or a random forest with a depth from 2 to 32 on a log scale),
// with the two models' error rates replaced by instant functions: the forest is good at any
// depth (0.08 to 0.12), the SVC bad (up to 0.95) but for a window of C around 100 where it is
// best (0.05). A sampler that settles on the forest early misses it.
double classifier(const Json& v) {
  if (v["kind"] == "svc") {
    double away = (std::log10(v["svc_c"].get<double>()) - 2) / 4;
    return 0.05 + 0.9 * (1 - std::exp(-away * away));
  }
  double depth = std::log2(v["rf_max_depth"].get<double>()) - 3;
  return 0.08 + 0.01 * depth * depth;
}

std::string rosenbrock_space() {
  std::string space;
  for (int i = 1; i <= 10; ++i)
    space += fmt::format("x{}: {{type: uniform, low: -2.048, high: 2.048}}\n", i);
  return space;
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
      {"rosenbrock10", rosenbrock_space(), rosenbrock10, 0},
      {"classifier",
       "kind: {type: choice, values: [svc, forest]}\n"
       "svc_c: {type: loguniform, low: 1.0e-10, high: 1.0e10, when: {kind: svc}}\n"
       "rf_max_depth: {type: int, low: 2, high: 32, log: true, when: {kind: forest}}\n",
       classifier, 0.05},
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
