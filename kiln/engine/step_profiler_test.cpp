// The step profiler as the trainer drives it: which steps it keeps, the phases of each on the
// trainer's clock, the layers' calls, when its window closes, and the Chrome trace of it all.

#include "kiln/engine/step_profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace step_profiler_test {

using test_rig::train_options;
using test_rig::TrainerRig;

std::vector<std::string> phase_names(const ProfiledStep& step) {
  std::vector<std::string> names;
  for (const auto& phase : step.phases) names.push_back(phase.phase);
  return names;
}

const PhaseTime& phase_of(const ProfiledStep& step, const std::string& name) {
  for (const auto& phase : step.phases)
    if (phase.phase == name) return phase;
  throw std::runtime_error("no phase " + name);
}

// 8 examples in batches of 2: 4 steps an epoch; a training batch takes 1 s of the fake clock,
// inside forward (the counting metric moves it), a validation batch 100 s.
struct ProfiledRig {
  TrainerRig rig;
  int closed = 0;
  std::vector<int64_t> steps_when_closed;
  StepProfiler profiler;

  ProfiledRig(int64_t from, int64_t to)
      : profiler(
            from, to, [this] { return rig.now; },
            [this](const StepProfiler& p) {
              ++closed;
              for (const auto& step : p.steps()) steps_when_closed.push_back(step.step);
            }) {
    rig.profiler = &profiler;
  }
};

TEST(StepProfiler, KeepsTheStepsOfItsWindowWithEachPhaseOnTheTrainersClock) {
  ProfiledRig profiled(3, 5);
  profiled.rig.fit(train_options("6 steps", "4 steps", "100 steps"));
  EXPECT_EQ(profiled.closed, 1);
  EXPECT_EQ(profiled.steps_when_closed, (std::vector<int64_t>{3, 4, 5}));
  const auto& steps = profiled.profiler.steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(phase_names(steps[0]),
            (std::vector<std::string>{"data", "forward", "backward", "optimizer", "callbacks"}));
  // Step 4 validates (2 batches of 100 s); step 5 asked the ended epoch for data first.
  EXPECT_EQ(phase_names(steps[1]),
            (std::vector<std::string>{"data", "forward", "backward", "optimizer", "callbacks",
                                      "validation"}));
  EXPECT_EQ(phase_names(steps[2]).front(), "data");
  EXPECT_EQ(phase_names(steps[2])[1], "data");
  const PhaseTime& forward = phase_of(steps[0], "forward");
  EXPECT_DOUBLE_EQ(forward.end - forward.begin, 1.0);
  const PhaseTime& validation = phase_of(steps[1], "validation");
  EXPECT_DOUBLE_EQ(validation.end - validation.begin, 200.0);
  for (size_t i = 1; i < steps[0].phases.size(); ++i)
    EXPECT_GE(steps[0].phases[i].begin, steps[0].phases[i - 1].end);
}

TEST(StepProfiler, TimesTheLayersOfEachProfiledStep) {
  ProfiledRig profiled(2, 2);
  profiled.rig.fit(train_options("4 steps", "100 steps", "100 steps"));
  const auto& steps = profiled.profiler.steps();
  ASSERT_EQ(steps.size(), 1u);
  const auto& paths = profiled.profiler.layer_paths();
  std::vector<std::string> called;
  for (const auto& call : steps[0].layers) {
    ASSERT_TRUE(paths.count(call.module));
    called.push_back(paths.at(call.module));
    // The stack's and its linear layer's output, [2, 3] floats; backward after the forward.
    EXPECT_EQ(call.output_bytes, 2 * 3 * 4);
    EXPECT_GE(call.backward_begin, phase_of(steps[0], "forward").end);
    EXPECT_GE(call.backward_end, call.backward_begin);
  }
  // The network calls its stack, which calls its one layer.
  EXPECT_EQ(called, (std::vector<std::string>{"layers", "layers.0"}));
}

TEST(StepProfiler, AWindowTrainingNeverReachesClosesEmptyWhenTrainingEnds) {
  ProfiledRig profiled(100, 110);
  profiled.rig.fit(train_options("3 steps", "100 steps", "100 steps"));
  EXPECT_EQ(profiled.closed, 1);
  EXPECT_TRUE(profiled.profiler.steps().empty());
}

TEST(StepProfiler, AWindowCutShortByTheEndOfTrainingKeepsWhatItHas) {
  ProfiledRig profiled(2, 50);
  profiled.rig.fit(train_options("3 steps", "100 steps", "100 steps"));
  EXPECT_EQ(profiled.closed, 1);
  EXPECT_EQ(profiled.steps_when_closed, (std::vector<int64_t>{2, 3}));
}

TEST(StepProfiler, WritesAChromeTraceOfStepsPhasesAndLayers) {
  ProfiledRig profiled(1, 1);
  profiled.rig.fit(train_options("2 steps", "100 steps", "100 steps"));
  Json trace = profiled.profiler.chrome_trace().to_json();
  std::map<std::string, int> names, categories;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    names[event["name"].get<std::string>()] += 1;
    categories[event["cat"].get<std::string>()] += 1;
  }
  EXPECT_EQ(names["step 1"], 1);
  EXPECT_EQ(names["forward"], 1);
  EXPECT_EQ(names["optimizer"], 1);
  EXPECT_EQ(categories["phase"], 5);
  EXPECT_GE(categories["layer forward"], 1);
  EXPECT_EQ(categories["layer backward"], categories["layer forward"]);
}

TEST(StepProfiler, AWindowThatEndsBeforeItBeginsIsAConfigError) {
  TrainerRig rig;
  TrainOptions options = train_options("2 steps", "100 steps", "100 steps");
  options.profile = ProfileWindow{5, 4};
  try {
    rig.fit(options);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.profile.to");
    EXPECT_THAT(e.what(), ::testing::HasSubstr("before train.profile.from (5)"));
  }
}

}  // namespace step_profiler_test
}  // namespace kiln::engine
