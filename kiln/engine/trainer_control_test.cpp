// Train control on the trainer's rig: gradient accumulation, clipping by norm and by value with
// the norm logged, the NaN policies (stop, skip_step, rewind), stop_at, val_steps and bf16
// autocast; the fp16 loss scaler's arithmetic, and the trainer's loss scaling in float32.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/text_file.h"
#include "kiln/engine/precision.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace trainer_control_test {

using test_rig::CountingMetric;
using test_rig::PoisonedLoss;
using test_rig::ScriptedMetric;
using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

torch::Tensor weight_of(const TrainerRig& rig) {
  return named_state(*rig.model).at("layers.0.weight").detach().clone();
}

// The rig's first weight after each step, by step (0-based).
struct WeightsAfterEachStep : Callback {
  std::vector<torch::Tensor> steps;
  void on_step_end(TrainerView& view, const Progress&) override {
    steps.resize(view.progress().steps);
    steps.back() = named_state(view.model()).at("layers.0.weight").clone();
  }
  const torch::Tensor& operator[](size_t step) const { return steps.at(step); }
};

// Two rigs whose models start from the same weights.
std::unique_ptr<TrainerRig> seeded_rig(int64_t batch_size = 2, torch::Device device = torch::kCPU) {
  torch::manual_seed(11);
  return std::make_unique<TrainerRig>(8, 6, "{type: sgd, lr: 0.1}", batch_size, device);
}

TEST(Accumulation, TwoBatchesOfTwoStepLikeOneBatchOfFour) {
  auto accumulated = seeded_rig(2), whole = seeded_rig(4);
  TrainOptions options = train_options("1 step", "100 steps", "100 steps");
  options.accumulate = 2;
  TrainResult result = accumulated->fit(options);
  whole->fit(train_options("1 step", "100 steps", "100 steps"));
  EXPECT_EQ(result.progress.samples, 4);
  EXPECT_DOUBLE_EQ(result.progress.epochs, 0.5);
  EXPECT_TRUE(torch::allclose(weight_of(*accumulated), weight_of(*whole), 1e-5, 1e-7));
}

TEST(Accumulation, TheEpochsLastGroupTakesWhatIsLeft) {
  TrainerRig rig;  // 4 batches per epoch: groups of 3 and 1
  TrainOptions options = train_options("2 epochs", "100 steps", "100 steps");
  options.accumulate = 3;
  TrainResult result = rig.fit(options);
  EXPECT_EQ(result.progress.steps, 4);
  EXPECT_EQ(result.progress.samples, 16);
  EXPECT_EQ(planned_steps(Period::parse("2 epochs"), rig.train, 3), 4);
}

TEST(Clipping, ByNormBoundsTheUpdateAndLogsTheNormBeforeClipping) {
  auto clipped = seeded_rig();
  torch::Tensor before = weight_of(*clipped);
  TrainOptions options = train_options("1 step", "100 steps", "1 step");
  options.clip_norm = 1e-3;
  clipped->fit(options);
  double moved = (weight_of(*clipped) - before).norm().item<double>();
  // lr x the clipped norm, bias included, plus float32 rounding of the weights.
  EXPECT_LE(moved, 0.1 * 1e-3 + 1e-6);
  ASSERT_EQ(clipped->values_logged("train/grad_norm").size(), 1u);
  EXPECT_GT(clipped->values_logged("train/grad_norm")[0], 1e-2);
}

TEST(Clipping, ByValueBoundsEveryElement) {
  auto clipped = seeded_rig();
  torch::Tensor before = weight_of(*clipped);
  TrainOptions options = train_options("1 step", "100 steps", "100 steps");
  options.clip_value = 1e-4;
  clipped->fit(options);
  // lr x the clipped value, plus float32 rounding of weights below 1.
  EXPECT_LE((weight_of(*clipped) - before).abs().max().item<double>(), 0.1 * 1e-4 + 1e-7);
}

TEST(OnNan, StopFailsNamingTheStepAndTheRemedies) {
  TrainerRig rig;
  rig.loss = std::make_unique<PoisonedLoss>(3);
  try {
    rig.fit(train_options("8 steps", "100 steps", "100 steps"));
    FAIL() << "a NaN loss did not stop training";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("training loss became nan at step 3"));
    EXPECT_THAT(e.what(), HasSubstr("train.on_nan: skip_step or rewind"));
  }
}

TEST(OnNan, SkipStepLeavesTheWeightsOfThatStepAlone) {
  TrainerRig rig;
  rig.loss = std::make_unique<PoisonedLoss>(3, /*once=*/true);
  WeightsAfterEachStep weights;
  rig.callbacks.push_back(&weights);
  TrainOptions options = train_options("4 steps", "100 steps", "100 steps");
  options.on_nan = OnNan::kSkipStep;
  TrainResult result = rig.fit(options);
  EXPECT_EQ(result.progress.steps, 4);
  EXPECT_TRUE(torch::equal(weights[2], weights[1]));  // step 3 made no update
  EXPECT_FALSE(torch::equal(weights[3], weights[2]));
  EXPECT_THAT(rig.values_logged("train/skipped_steps"), ElementsAre(1));
}

TEST(OnNan, SkipStepGivesUpAfterTenInARow) {
  TrainerRig rig;
  rig.loss = std::make_unique<PoisonedLoss>(2);
  TrainOptions options = train_options("40 steps", "100 steps", "100 steps");
  options.on_nan = OnNan::kSkipStep;
  EXPECT_THROW(rig.fit(options), Error);
}

TEST(OnNan, RewindGoesBackToTheLastCheckpointWithHalfTheLearningRate) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.add_callback("{type: checkpoint, every: 2 steps, keep_last: 0}");
  rig.loss = std::make_unique<PoisonedLoss>(5, /*once=*/true);  // the 5th step's loss
  TrainOptions options = train_options("8 steps", "100 steps", "1 step");
  options.on_nan = OnNan::kRewind;
  TrainResult result = rig.fit(options);
  EXPECT_EQ(result.progress.steps, 8);
  EXPECT_THAT(rig.values_logged("train/rewinds"), ElementsAre(1));
  // Steps 1-4 at the full rate; then, rewound to the step-4 checkpoint, steps 5-8 at half.
  EXPECT_THAT(rig.steps_logged("train/lr"), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(rig.values_logged("train/lr"),
              ElementsAre(0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05));
  // The rewind count and rate survive in the checkpoints written after it.
  Json state = Json::parse(read_text_file(result.checkpoint + "/train_state.json"));
  EXPECT_EQ(state.at("lr_multiplier"), 0.5);
  EXPECT_EQ(state.at("rewinds"), 1);
}

TEST(OnNan, RewindWithoutACheckpointCallbackIsAConfigError) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  TrainOptions options = train_options("8 steps", "100 steps", "100 steps");
  options.on_nan = OnNan::kRewind;
  try {
    rig.fit(options);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.on_nan");
    EXPECT_THAT(e.what(), HasSubstr("add callbacks: [{type: checkpoint"));
  }
}

TEST(OnNan, RewindBeforeTheFirstCheckpointSaysSo) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.add_callback("{type: checkpoint, every: 4 steps}");
  rig.loss = std::make_unique<PoisonedLoss>(2, true);
  TrainOptions options = train_options("8 steps", "100 steps", "100 steps");
  options.on_nan = OnNan::kRewind;
  try {
    rig.fit(options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no checkpoint to rewind to yet"));
  }
}

// The average goes back with the weights: after the rewind to step 4, step 5's average is made
// from step 4's, not from the abandoned steps 5.
TEST(OnNan, RewindPutsTheEmaBackToTheCheckpoints) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.add_callback("{type: ema, decay: 0.5, warmup: false}", 0);
  rig.add_callback("{type: checkpoint, every: 2 steps, keep_last: 0}", 1);
  struct Watch : Callback {
    std::vector<std::pair<torch::Tensor, torch::Tensor>> seen;  // (average, weights) per step end
    void on_step_end(TrainerView& view, const Progress&) override {
      seen.emplace_back(view.evaluated_weights().at("layers.0.weight").clone(),
                        named_state(view.model()).at("layers.0.weight").detach().clone());
    }
  } watch;
  rig.callbacks.push_back(&watch);  // after the ema: sees its update of the step
  rig.loss = std::make_unique<PoisonedLoss>(6, /*once=*/true);
  TrainOptions options = train_options("8 steps", "100 steps", "100 steps");
  options.on_nan = OnNan::kRewind;
  rig.fit(options);
  // Steps 1-6 (step 6's NaN is acted on before its checkpoint, after the callbacks saw it: a
  // step late), then, rewound to step 4, steps 5-8 again.
  ASSERT_EQ(watch.seen.size(), 10u);
  const auto& at_step_4 = watch.seen[3];
  const auto& abandoned_5 = watch.seen[4];
  const auto& redone_5 = watch.seen[6];
  EXPECT_FALSE(torch::allclose(redone_5.second, abandoned_5.second));  // half the rate
  EXPECT_TRUE(torch::allclose(redone_5.first, 0.5 * at_step_4.first + 0.5 * redone_5.second));
}

TEST(StopAt, EndsTrainingOnceTheMonitorReachesTheGoal) {
  TrainerRig rig;
  rig.metrics.clear();
  rig.metrics.push_back({"score", std::make_unique<CountingMetric>(&rig.now, 1.0)});
  rig.val_metrics.clear();
  rig.val_metrics.push_back(
      {"score", std::make_unique<ScriptedMetric>(std::vector<double>{0.5, 0.7, 0.95, 0.99})});
  TrainOptions options = train_options("8 steps", "1 step", "100 steps");
  options.monitor = "val/score";
  options.mode = Mode::kMax;
  options.stop_at = 0.9;
  TrainResult result = rig.fit(options);
  EXPECT_EQ(result.progress.steps, 3);
  EXPECT_THAT(result.stop_reason, HasSubstr("val/score reached 0.95 (train.stop_at: 0.9)"));
}

TEST(ValSteps, LimitsTheValidationBatches) {
  TrainerRig rig;  // 6 validation examples in batches of 4
  TrainOptions options = train_options("1 step", "1 step", "100 steps");
  options.val_steps = 1;
  rig.fit(options);
  EXPECT_THAT(rig.values_logged("val/count"), ElementsAre(4));
}

TEST(Precision, Bf16AutocastTrainsCloseToFloat32) {
  auto bf16 = seeded_rig(), fp32 = seeded_rig();
  TrainOptions options = train_options("4 steps", "100 steps", "100 steps");
  options.precision = PrecisionMode::kBf16;
  bf16->fit(options);
  fp32->fit(train_options("4 steps", "100 steps", "100 steps"));
  // The forward pass ran in bfloat16 (8 bits of mantissa): close, but not the same.
  EXPECT_FALSE(torch::equal(weight_of(*bf16), weight_of(*fp32)));
  EXPECT_TRUE(torch::allclose(weight_of(*bf16), weight_of(*fp32), 0.05, 0.01));
  EXPECT_EQ(weight_of(*bf16).scalar_type(), torch::kFloat32);
}

// Cross-entropy / 100: times the loss scale 2^16, its gradients stay well inside float16's range
// (the rig's plain cross-entropy comes within 10% of overflowing it).
class SmallLoss : public losses::Loss {
 public:
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    return 0.01 * torch::nn::functional::cross_entropy(output, target);
  }
};

// Runs only where LibTorch has CUDA (never in CI): fp16 autocast with dynamic loss scaling.
TEST(Precision, Fp16OnCudaTrainsCloseToFloat32WithALossScale) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "fp16 needs CUDA; this machine has none";
  auto fp16 = seeded_rig(2, torch::kCUDA), fp32 = seeded_rig(2, torch::kCUDA);
  fp16->loss = std::make_unique<SmallLoss>();
  fp32->loss = std::make_unique<SmallLoss>();
  TrainOptions options = train_options("4 steps", "100 steps", "1 step");
  options.precision = PrecisionMode::kFp16;
  fp16->fit(options);
  fp32->fit(train_options("4 steps", "100 steps", "1 step"));
  EXPECT_FALSE(torch::equal(weight_of(*fp16), weight_of(*fp32)));
  EXPECT_TRUE(torch::allclose(weight_of(*fp16), weight_of(*fp32), 0.01, 0.001));
  EXPECT_EQ(weight_of(*fp16).scalar_type(), torch::kFloat32);  // master weights stay float32
  EXPECT_THAT(fp16->values_logged("train/loss_scale"), ElementsAre(65536, 65536, 65536, 65536));
  EXPECT_TRUE(fp32->values_logged("train/loss_scale").empty());
}

TEST(Precision, Fp16WithoutCudaIsAConfigError) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "this machine has CUDA";
  try {
    Precision precision(PrecisionMode::kFp16, torch::kCPU);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("train.precision"));
    EXPECT_THAT(e.what(), HasSubstr("use bf16"));
  }
}

// The trainer's loss scaling without CUDA: Precision::kScaledFp32ForTests scales a float32 loss
// as fp16 does. Multiplying by a power of two and dividing again is exact in float32, so while
// nothing overflows the weights match an unscaled run bit for bit.
TEST(LossScaling, ChangesNoWeightWhileNothingOverflows) {
  auto scaled = seeded_rig(), plain = seeded_rig();
  TrainOptions options = train_options("4 steps", "100 steps", "1 step");
  options.precision = Precision::kScaledFp32ForTests;
  scaled->fit(options);
  plain->fit(train_options("4 steps", "100 steps", "1 step"));
  EXPECT_TRUE(torch::equal(weight_of(*scaled), weight_of(*plain)));
  EXPECT_THAT(scaled->values_logged("train/loss_scale"), ElementsAre(65536, 65536, 65536, 65536));
  EXPECT_TRUE(plain->values_logged("train/loss_scale").empty());
}

TEST(LossScaling, AnOverflowSkipsTheStepHalvesTheScaleAndIsNoNan) {
  auto rig = seeded_rig();
  // The 3rd step's loss is 1e35 times larger: finite, but its gradients times 2^16 overflow.
  rig->loss = std::make_unique<PoisonedLoss>(3, /*once=*/true, 1e35);
  WeightsAfterEachStep weights;
  rig->callbacks.push_back(&weights);
  rig->checkpoints_dir = rig->dir.file("checkpoints");
  TrainOptions options = train_options("4 steps", "100 steps", "1 step");
  options.precision = Precision::kScaledFp32ForTests;  // and train.on_nan stays `stop`
  TrainResult result = rig->fit(options);
  EXPECT_EQ(result.progress.steps, 4);
  EXPECT_TRUE(torch::equal(weights[2], weights[1]));  // step 3 made no update
  EXPECT_FALSE(torch::equal(weights[3], weights[2]));
  EXPECT_THAT(rig->values_logged("train/loss_scale"), ElementsAre(65536, 65536, 32768, 32768));
  EXPECT_TRUE(rig->values_logged("train/skipped_steps").empty());  // not a NaN skip

  // The halved scale is saved, and a resumed run goes on with it.
  Json state = Json::parse(read_text_file(result.checkpoint + "/train_state.json"));
  EXPECT_EQ(state.at("precision").at("loss_scale"), 32768);
  EXPECT_EQ(state.at("precision").at("good_steps"), 1);
  auto resumed = seeded_rig();
  resumed->resume_from = result.checkpoint;
  TrainOptions longer = train_options("6 steps", "100 steps", "1 step");
  longer.precision = Precision::kScaledFp32ForTests;
  resumed->fit(longer);
  EXPECT_THAT(resumed->steps_logged("train/loss_scale"), ElementsAre(5, 6));
  EXPECT_THAT(resumed->values_logged("train/loss_scale"), ElementsAre(32768, 32768));
}

TEST(LossScaler, HalvesAfterAnOverflowAndDoublesAfterAGoodRun) {
  LossScaler scaler;
  EXPECT_EQ(scaler.value(), 65536.0);
  torch::Tensor good = torch::full({3}, 65536.0), bad = torch::tensor({1.0f, INFINITY});
  EXPECT_TRUE(scaler.unscale({good}));
  EXPECT_TRUE(torch::equal(good, torch::ones({3})));
  EXPECT_FALSE(scaler.unscale({bad}));
  scaler.update(false);
  EXPECT_EQ(scaler.value(), 32768.0);
  for (int64_t i = 0; i < LossScaler::growth_interval - 1; ++i) scaler.update(true);
  EXPECT_EQ(scaler.value(), 32768.0);
  scaler.update(true);
  EXPECT_EQ(scaler.value(), 65536.0);
  LossScaler restored;
  scaler.update(false);
  restored.load_state(scaler.state());
  EXPECT_EQ(restored.value(), 32768.0);
}

}  // namespace trainer_control_test
}  // namespace kiln::engine
