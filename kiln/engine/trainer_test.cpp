// The training loop's schedule: where `train.max` stops it, at which steps it validates and logs
// (read back from metrics.csv), and the errors it reports for a bad monitor or a diverging loss.
// Metric bookkeeping (best values, throughput, windows) is in trainer_metrics_test.cpp.

#include "kiln/engine/trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <regex>
#include <set>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace trainer_test {

using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct MaxCase {
  std::string max;
  int64_t steps;
  double epochs;
};

TEST(Trainer, StopsWhereTrainMaxSaysInEveryUnit) {
  // 8 examples in batches of 2: 4 steps per epoch, 2 samples per step.
  const MaxCase cases[] = {
      {"5 steps", 5, 1.25},  {"1 epoch", 4, 1.0},     {"1.5 epochs", 6, 1.5},
      {"3 epochs", 12, 3.0}, {"10 samples", 5, 1.25}, {"9 samples", 5, 1.25},
      {"1 step", 1, 0.25},
  };
  for (const auto& c : cases) {
    TrainerRig rig;
    TrainResult result = rig.fit(train_options(c.max, "1000 steps", "1 step"));
    EXPECT_EQ(result.progress.steps, c.steps) << c.max;
    EXPECT_DOUBLE_EQ(result.progress.epochs, c.epochs) << c.max;
    EXPECT_EQ(result.progress.samples, 2 * c.steps) << c.max;
    std::vector<int64_t> every_step(static_cast<size_t>(c.steps));
    std::iota(every_step.begin(), every_step.end(), 1);
    EXPECT_THAT(rig.steps_logged("train/loss"), ElementsAreArray(every_step)) << c.max;
  }
}

TEST(Trainer, ValidatesAtEveryBoundaryAndOnceMoreAtAnUnalignedEnd) {
  struct Case {
    std::string validate_every;
    std::vector<int64_t> steps;
  };
  const Case cases[] = {
      {"3 steps", {3, 6, 8}},     // 8 is no boundary: one final validation
      {"2 steps", {2, 4, 6, 8}},  // 8 is a boundary: no second validation there
      {"1 epoch", {4, 8}},
      {"5 samples", {3, 5, 8}},  // 2 samples per step: 5, 10, 15 fall in steps 3, 5, 8
      {"100 steps", {8}},
  };
  for (const auto& c : cases) {
    TrainerRig rig;
    rig.fit(train_options("8 steps", c.validate_every, "100 steps"));
    EXPECT_EQ(rig.steps_logged("val/loss"), c.steps) << c.validate_every;
    EXPECT_EQ(rig.steps_logged("val/count"), c.steps) << c.validate_every;
  }
}

TEST(Trainer, WritesOneConsoleLinePerValidation) {
  TrainerRig rig;
  rig.fit(train_options("8 steps", "3 steps", "100 steps"));
  std::string console = read_text_file(rig.dir.file("console.txt"));
  for (int step : {3, 6, 8})
    EXPECT_THAT(console, HasSubstr(fmt::format("validation at step {}:", step)));
  EXPECT_THAT(console, HasSubstr("val/count 6.0000"));
  EXPECT_THAT(read_text_file(rig.dir.file("train.log")), HasSubstr("validation at step 3:"));
}

TEST(Trainer, LogsTrainingEveryLogEveryAndFlushesAPartialWindowAtTheEnd) {
  TrainerRig rig;
  rig.fit(train_options("8 steps", "100 steps", "3 steps"));
  for (const char* tag : {"train/loss", "train/lr", "train/samples_per_s", "train/count"})
    EXPECT_THAT(rig.steps_logged(tag), ElementsAre(3, 6, 8)) << tag;
  // The last window holds steps 7 and 8 only.
  EXPECT_THAT(rig.values_logged("train/count"), ElementsAre(6, 6, 4));
  EXPECT_THAT(rig.values_logged("train/lr"), ElementsAre(0.1, 0.1, 0.1));
}

TEST(Trainer, WritesNoEmptyWindowWhenTheEndFallsOnALogBoundary) {
  TrainerRig rig;
  rig.fit(train_options("6 steps", "100 steps", "3 steps"));
  EXPECT_THAT(rig.steps_logged("train/loss"), ElementsAre(3, 6));
}

TEST(Trainer, RunsWithoutAValidationSplit) {
  TrainerRig rig(8, 0);
  TrainOptions options = train_options("4 steps", "1 step", "2 steps");
  options.monitor = "train/loss";
  TrainResult result = rig.fit(options);
  EXPECT_EQ(result.progress.steps, 4);
  EXPECT_TRUE(rig.steps_logged("val/loss").empty());
  EXPECT_THAT(rig.steps_logged("train/loss"), ElementsAre(2, 4));
}

TEST(Trainer, AnUnknownMonitorNamesTrainMonitorAndSuggestsATag) {
  TrainerRig rig;
  TrainOptions options = train_options("4 steps", "1 epoch", "1 step");
  options.monitor = "val/cuont";
  try {
    rig.fit(options);
    FAIL() << "accepted train.monitor: val/cuont";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.monitor");
    EXPECT_THAT(e.what(), HasSubstr("train.monitor"));
    EXPECT_THAT(e.what(), HasSubstr("\"val/cuont\""));
    EXPECT_THAT(e.what(), HasSubstr("did you mean \"val/count\"?"));
  }
  EXPECT_TRUE(rig.steps_logged("train/loss").empty()) << "trained despite the bad monitor";
}

TEST(Trainer, AValidationMonitorWithoutAValidationSplitIsAConfigError) {
  TrainerRig rig(8, 0);
  try {
    rig.fit(train_options("4 steps", "1 epoch", "1 step"));  // monitor defaults to val/loss
    FAIL() << "accepted train.monitor: val/loss without a val split";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.monitor");
    EXPECT_THAT(e.what(), HasSubstr("train/loss"));
  }
}

// A training set that dropped two damaged records when it was read.
class DatasetWithSkippedRecords : public data::TensorDataset {
 public:
  DatasetWithSkippedRecords()
      : TensorDataset(torch::randn({8, 4}), torch::arange(8, torch::kInt64) % 3) {}
  data::SkippedRecords skipped_records() const override {
    return {2, "train.tfrecord: record 5 at byte 1234: data CRC mismatch"};
  }
};

TEST(Trainer, ReportsSkippedRecordsAtTheEndOfEveryEpoch) {
  TrainerRig rig;
  rig.train = data::Loader(std::make_shared<DatasetWithSkippedRecords>(), {}, {2, false, false, 1});
  rig.fit(train_options("2.5 epochs", "1000 steps", "1000 steps"));
  EXPECT_THAT(rig.steps_logged("train/skipped_records"), ElementsAre(4, 8));
  EXPECT_THAT(rig.values_logged("train/skipped_records"), ElementsAre(2, 2));
  std::string console = read_text_file(rig.dir.file("console.txt"));
  EXPECT_THAT(console, HasSubstr("epoch 2: skipped 2 corrupt training records (on_corrupt: skip); "
                                 "the first: train.tfrecord: record 5"));
}

// Leaves the `refused` examples out of each batch, as streamed feature columns do with the rows
// they refuse under on_corrupt: skip; a batch of refused rows only comes out empty.
class DatasetRefusingRows : public data::TensorDataset {
 public:
  DatasetRefusingRows(const data::TensorDataset& all, std::set<int64_t> refused)
      : TensorDataset(all), refused_(std::move(refused)) {}
  data::Batch gather(const torch::Tensor& indices) const override {
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < indices.size(0); ++i)
      if (!refused_.count(indices[i].item<int64_t>())) kept.push_back(indices[i].item<int64_t>());
    return TensorDataset::gather(torch::tensor(kept, torch::kInt64));
  }

 private:
  std::set<int64_t> refused_;
};

TEST(Trainer, ABatchOfRefusedRowsOnlyAddsNothingToTrainingOrValidation) {
  auto all = std::dynamic_pointer_cast<const data::TensorDataset>(test_rig::random_dataset(8, 1));
  auto val = std::dynamic_pointer_cast<const data::TensorDataset>(test_rig::random_dataset(6, 2));
  torch::manual_seed(7);
  TrainerRig refusing;
  refusing.train =
      data::Loader(std::make_shared<DatasetRefusingRows>(*all, std::set<int64_t>{2, 3}), {},
                   {2, false, false, 1});
  refusing.val.emplace(std::make_shared<DatasetRefusingRows>(*val, std::set<int64_t>{0, 1, 2, 3}),
                       std::vector<std::shared_ptr<const data::Transform>>{},
                       data::LoaderOptions{4, false, false, 1});
  refusing.fit(train_options("1 epoch", "1 epoch", "1 step"));
  // The empty second batch's step updated nothing and had no loss to log; validation saw the
  // last two examples only.
  EXPECT_THAT(refusing.steps_logged("train/lr"), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(refusing.steps_logged("train/loss"), ElementsAre(1, 3, 4));
  for (double loss : refusing.values_logged("train/loss")) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_THAT(refusing.values_logged("val/count"), ElementsAre(2));
  EXPECT_TRUE(std::isfinite(refusing.values_logged("val/loss").at(0)));
  // The weights are those of training on the kept examples.
  torch::manual_seed(7);
  TrainerRig kept;
  data::Batch rows = all->gather(torch::tensor({0, 1, 4, 5, 6, 7}, torch::kInt64));
  kept.train = data::Loader(std::make_shared<data::TensorDataset>(rows.input, rows.target), {},
                            {2, false, false, 1});
  kept.fit(train_options("1 epoch", "1000 steps", "1 step"));
  std::vector<torch::Tensor> got = refusing.model->parameters(), want = kept.model->parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(torch::equal(got[i], want[i])) << i;
}

TEST(Trainer, ANonFiniteLossNamesTheStep) {
  TrainerRig rig;
  rig.loss = std::make_unique<test_rig::PoisonedLoss>(4);
  try {
    rig.fit(train_options("8 steps", "100 steps", "1 step"));
    FAIL() << "trained on through a NaN loss";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("became nan at step 4"));
    EXPECT_THAT(e.what(), HasSubstr("optimizer.lr"));
  }
  EXPECT_THAT(rig.steps_logged("train/loss"), ElementsAre(1, 2, 3));
}

TEST(Trainer, AHugeLearningRateStopsAtTheFirstNonFiniteStep) {
  TrainerRig rig(8, 6, "{type: sgd, lr: 1.0e+38}");
  try {
    rig.fit(train_options("200 steps", "1000 steps", "1 step"));
    FAIL() << "200 steps at lr 1e38 kept a finite loss";
  } catch (const Error& e) {
    std::cmatch match;
    ASSERT_TRUE(
        std::regex_search(e.what(), match, std::regex("became (nan|inf|-inf) at step (\\d+)")))
        << e.what();
    // Every step before the bad one completed and was logged; the bad one was not.
    int64_t bad_step = std::stoll(match[2]);
    EXPECT_GT(bad_step, 1);
    EXPECT_EQ(rig.steps_logged("train/loss").size(), static_cast<size_t>(bad_step - 1));
  }
}

// The scheduler sets the rate before every step: the rate logged after step n is the one step n
// used, base x factor(n - 1).
TEST(Trainer, AppliesTheScheduleBeforeEveryStep) {
  TrainerRig rig(8, 0);
  rig.scheduler = optim::scheduler_registry().create(read_spec("scheduler", "cosine"),
                                                     optim::ScheduleSpan{8, 4, 2});
  TrainOptions options = train_options("8 steps", "1 epoch", "1 step");
  options.monitor = "train/loss";
  rig.fit(options);
  std::vector<double> logged = rig.values_logged("train/lr");
  ASSERT_EQ(logged.size(), 8u);
  for (size_t n = 1; n <= 8; ++n)
    EXPECT_NEAR(logged[n - 1], 0.1 * 0.5 * (1 + std::cos(M_PI * double(n - 1) / 8)), 1e-9)
        << "after step " << n;
}

}  // namespace trainer_test
}  // namespace kiln::engine
