// A training step that neither logs, validates nor checkpoints never waits for the device: it
// reads no value back (no aten::_local_scalar_dense, the operator behind .item()), so that on a
// GPU the host queues step after step. Counted on the CPU with LibTorch's RecordFunction
// callbacks (tests/support/operator_counter.h) during a whole `kiln train` of the CNN and ResNet
// examples, with the trainer's callbacks, TensorBoard's included, on. A step of the CNN with
// AdamW also dispatches no more operators than PyTorch's eager loop with foreach=True does
// (benchmarks/peers/count_step_ops.py counts that with torch.profiler).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/engine/callback.h"
#include "kiln/experiment/training_run.h"
#include "tests/support/operator_counter.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {
namespace training_step_reads_test {

constexpr const char* kRead = "aten::_local_scalar_dense";
// PyTorch 1.13's eager step of the same CNN, batch 128, AdamW(foreach=True), as counted by
// benchmarks/peers/count_step_ops.py: zero_grad, forward, cross-entropy, backward, update.
constexpr int64_t kPeerOperators = 718;

// What one step dispatched: from the end of the previous step's callbacks to the end of this
// one's, so the previous step's logging, validation and checkpoint fall in it.
struct StepCount {
  int64_t step = 0;
  int64_t reads = 0;
  int64_t operators = 0;  // of ATen
  std::map<std::string, int64_t> by_name;
};

// The counter and the counts of the run a test makes; one run at a time.
kiln::testing::OperatorCounter* current_counter = nullptr;
std::vector<StepCount>* current_counts = nullptr;

// Listed last in the config's callbacks, so that the others run before it in each step.
class CountOperators : public engine::Callback {
 public:
  explicit CountOperators(const NoOptions&) {}
  void on_fit_begin(engine::TrainerView&) override { current_counter->reset(); }
  void on_step_end(engine::TrainerView& view, const Progress&) override {
    StepCount count{view.progress().steps, current_counter->count(kRead), 0,
                    current_counter->counts()};
    // ATen's operators, as torch.profiler's aten:: events count them (not autograd's nodes).
    for (const auto& [name, times] : count.by_name)
      if (name.rfind("aten::", 0) == 0) count.operators += times;
    current_counts->push_back(count);
    current_counter->reset();
  }
};

KILN_REGISTER(engine::callback_registry, "count_operators_for_test", CountOperators, NoOptions,
              "A test's: counts the operators each step dispatches.");

// A file of the repository, found from the golden folder whose path the build gives the tests.
std::string repository_file(const std::string& path) {
  return std::string(KILN_GOLDEN_DIR) + "/../../" + path;
}

// Trains the example `config` for 12 steps of 128 Fashion-MNIST images (8 to an epoch): logs
// every 4 steps, validates every 8, checkpoints every 8, with an EMA, early stopping, a learning
// rate monitor and TensorBoard's histograms, images and projector. Returns each step's count.
std::vector<StepCount> train_counting(const std::string& config,
                                      std::vector<std::string> overrides = {}) {
  kiln::testing::TempDir dir;
  std::vector<std::string> common = {
      "data.train.limit=1024",
      "data.eval_batch_size=128",
      "train.max=12 steps",
      "train.log_every=4 steps",
      "train.validate_every=8 steps",
      "runtime.threads=1",
      "tensorboard.histograms_every=1 epoch",
      "callbacks=[{type: checkpoint, every: 8 steps}, {type: ema, decay: 0.99}, "
      "{type: early_stopping, patience: 5}, {type: lr_monitor}, "
      "{type: count_operators_for_test}]"};
  overrides.insert(overrides.begin(), common.begin(), common.end());
  TrainRequest request;
  request.config = load_config({repository_file(config)}, overrides);
  request.runs_root = dir.file("runs");
  request.quiet = true;
  kiln::testing::OperatorCounter counter;
  std::vector<StepCount> counts;
  current_counter = &counter;
  current_counts = &counts;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::tmpfile(), &std::fclose);
  TrainOutcome outcome = run_training(request, out.get(), system_seconds);
  current_counter = nullptr;
  current_counts = nullptr;
  EXPECT_EQ(outcome.exit_code, 0);
  return counts;
}

// The steps whose count holds nothing but training: not the first (start-up), not one after a
// step that logged, validated, checkpointed or ended an epoch (every 4th step here).
std::vector<StepCount> quiet_steps(const std::vector<StepCount>& counts) {
  std::vector<StepCount> quiet;
  for (const StepCount& count : counts)
    if (count.step > 1 && (count.step - 1) % 4 != 0) quiet.push_back(count);
  return quiet;
}

std::string names_of(const std::map<std::string, int64_t>& by_name) {
  std::string text;
  for (const auto& [name, count] : by_name) text += name + " " + std::to_string(count) + "\n";
  return text;
}

void expect_no_reads_in_quiet_steps(const std::vector<StepCount>& counts) {
  ASSERT_EQ(counts.size(), 12u);
  std::vector<StepCount> quiet = quiet_steps(counts);
  ASSERT_EQ(quiet.size(), 9u);  // steps 2 to 12 but 5 and 9
  for (const StepCount& count : quiet)
    EXPECT_EQ(count.reads, 0) << "step " << count.step << " read the device; it dispatched:\n"
                              << names_of(count.by_name);
  // A logging step reads what it logs: the counter sees reads where there are some.
  EXPECT_GT(counts[4].reads, 0) << "step 5 follows step 4's log line";
}

TEST(TrainingStepReads, TheCnnExampleReadsNothingBackInAStepThatDoesNotLog) {
  expect_no_reads_in_quiet_steps(train_counting("configs/examples/fashion_mnist/cnn.yaml"));
}

TEST(TrainingStepReads, TheResnetExampleReadsNothingBackInAStepThatDoesNotLog) {
  expect_no_reads_in_quiet_steps(
      train_counting("configs/examples/fashion_mnist/resnet.yaml", {"model.depth=8"}));
}

TEST(TrainingStepReads, ACnnStepWithAdamWDispatchesNoMoreOperatorsThanPyTorchsForeachLoop) {
  // The example as it is but for its callbacks, which the counter replaces (TensorBoard stays),
  // and the memory layout, which runtime.channels_last: auto picks by timing both on this machine
  // (a busy machine picked channels-last, whose conversions dispatched 26 operators more).
  std::vector<StepCount> quiet = quiet_steps(train_counting(
      "configs/examples/fashion_mnist/cnn.yaml",
      {"callbacks=[{type: count_operators_for_test}]", "runtime.channels_last=false"}));
  ASSERT_FALSE(quiet.empty());
  int64_t most = 0;
  for (const StepCount& count : quiet) {
    EXPECT_LE(count.operators, kPeerOperators) << "step " << count.step << " dispatched:\n"
                                               << names_of(count.by_name);
    most = std::max(most, count.operators);
  }
  RecordProperty("most_operators_in_a_quiet_step", std::to_string(most));
}

}  // namespace training_step_reads_test
}  // namespace kiln::experiment
