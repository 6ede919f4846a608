// End-to-end: bad configs and command lines exit 2 with messages that name the config path and
// the valid alternatives; `list`, `config show` and `--version` work.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }
std::string example(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/configs/examples/fashion_mnist/" + name;
}

TEST(CliErrors, MisspeltKeyExits2WithPathAndSuggestion) {
  auto result = testing::run_command(
      kiln("train " + example("cnn.yaml") + " --set 'train.maxx=1 epoch' --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("train.maxx"));
  EXPECT_THAT(result.err, HasSubstr("did you mean \"max\""));
  EXPECT_THAT(result.err, HasSubstr("(--set)"));
}

TEST(CliErrors, WrongTypeNamesPathAndFile) {
  testing::TempDir dir;
  std::string overlay = dir.write("bad.yaml", "data:\n  batch_size: many\n");
  auto result =
      testing::run_command(kiln("train " + example("mlp.yaml") + " " + overlay + " --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("data.batch_size"));
  EXPECT_THAT(result.err, HasSubstr("bad.yaml"));
  EXPECT_THAT(result.err, HasSubstr("expected integer"));
}

TEST(CliErrors, PipelineKeysAreCheckedWithTheirPaths) {
  auto workers = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set data.workers=-1 --dry-run"));
  EXPECT_EQ(workers.exit_code, 2);
  EXPECT_THAT(workers.err, HasSubstr("data.workers"));
  EXPECT_THAT(workers.err, HasSubstr(">= 0"));
  auto skip =
      testing::run_command(kiln("train " + example("mlp.yaml") +
                                " --set data.skip=60000 --set data.val_fraction=0 --dry-run"));
  EXPECT_EQ(skip.exit_code, 2);
  EXPECT_THAT(skip.err, HasSubstr("data.skip"));
  EXPECT_THAT(skip.err, HasSubstr("skipping 60000 of 60000 examples leaves none"));
}

TEST(Cli, DataBenchPullsTheBatchesOfATakenRange) {
  auto bench = testing::run_command(kiln("data bench " + example("mlp.yaml") +
                                         " --set data.take=1000 --set data.batch_size=100 --json"));
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_THAT(bench.out, HasSubstr("\"examples\":1000"));
  EXPECT_THAT(bench.out, HasSubstr("\"batches\":10"));
}

TEST(CliErrors, UnknownLayerListsKnownOnes) {
  auto result = testing::run_command(
      kiln("train " + example("cnn.yaml") + " --set 'model.layers[2]=reluu' --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("model.layers[2]"));
  EXPECT_THAT(result.err, HasSubstr("did you mean \"relu\""));
  EXPECT_THAT(result.err, HasSubstr("conv2d"));
}

TEST(CliErrors, ShapeMismatchNamesTheLayer) {
  auto result =
      testing::run_command(kiln("train " + example("mlp.yaml") +
                                " --set 'model.layers[0]={type: linear, out: 4}' --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("model.layers[0]"));
  EXPECT_THAT(result.err, HasSubstr("[1, 28, 28]"));
  EXPECT_THAT(result.err, HasSubstr("flatten"));
}

TEST(CliErrors, DryRunBuildsTheModel) {
  auto result = testing::run_command(kiln("train " + example("cnn.yaml") + " --dry-run"));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("config ok"));
}

TEST(CliErrors, MissingConfigFileIsAUsageError) {
  auto result = testing::run_command(kiln("train /nonexistent/x.yaml"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("x.yaml"));
}

TEST(CliErrors, UnknownSubcommandIsAUsageError) {
  EXPECT_EQ(testing::run_command(kiln("trian")).exit_code, 2);
  EXPECT_EQ(testing::run_command(kiln("")).exit_code, 2);
}

TEST(Cli, ListDocumentsEveryKind) {
  auto result = testing::run_command(kiln("list"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* name : {"dataset:", "fashion_mnist", "layer:", "conv2d", "batchnorm", "dropout",
                           "model:", "sequential", "loss:", "cross_entropy", "metric:", "accuracy",
                           "optimizer:", "adamw", "momentum", "transform:", "normalize"})
    EXPECT_THAT(result.out, HasSubstr(name));
}

TEST(Cli, ListOneKind) {
  auto result = testing::run_command(kiln("list optimizer"));
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("sgd"));
  EXPECT_THAT(result.out, Not(HasSubstr("conv2d")));
  auto unknown = testing::run_command(kiln("list optimiser"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean \"optimizer\""));
}

TEST(Cli, ConfigShowResolvesDefaultsAndOverrides) {
  auto result = testing::run_command(
      kiln("config show " + example("cnn.yaml") + " --set optimizer.lr=0.5 --set seed=7"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("lr: 0.5"));
  EXPECT_THAT(result.out, HasSubstr("seed: 7"));
  EXPECT_THAT(result.out, HasSubstr("amsgrad: false"));  // a default the file never mentions
  EXPECT_THAT(result.out, HasSubstr("momentum: 0.1"));   // batchnorm's default
}

TEST(Cli, VersionNamesLibTorch) {
  auto result = testing::run_command(kiln("--version"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("LibTorch"));
}

TEST(CliErrors, FreezeAndLearningRateScalesNameWhatTheModelHas) {
  auto freeze = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set 'train.freeze=[layers.9]' --dry-run"));
  EXPECT_EQ(freeze.exit_code, 2);
  EXPECT_THAT(freeze.err, HasSubstr("train.freeze[0]"));
  EXPECT_THAT(freeze.err, HasSubstr("did you mean \"layers.0\"?"));
  auto scales = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set 'train.lr_scales={\"fc.*\": 2}' --dry-run"));
  EXPECT_EQ(scales.exit_code, 2);
  EXPECT_THAT(scales.err, HasSubstr("train.lr_scales"));
  EXPECT_THAT(scales.err, HasSubstr("\"fc.*\" matches no trainable parameter"));
  auto everything = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set 'train.freeze=[layers]' --dry-run"));
  EXPECT_EQ(everything.exit_code, 2);
  EXPECT_THAT(everything.err, HasSubstr("every parameter is frozen"));
}

TEST(CliErrors, SchedulesNameTheirPathsAndWhatIsValid) {
  auto unit = testing::run_command(
      kiln("train " + example("mlp.yaml") +
           " --set 'schedules.weight_decay={type: step, step_size: 5 min}' --dry-run"));
  EXPECT_EQ(unit.exit_code, 2);
  EXPECT_THAT(unit.err, HasSubstr("schedules.weight_decay.step_size: \"5 min\" is a time"));
  auto name = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set schedules.weight_dacay=cosine --dry-run"));
  EXPECT_EQ(name.exit_code, 2);
  EXPECT_THAT(name.err, HasSubstr("did you mean \"weight_decay\"?"));
  // What the optimizer (adam) has and what the run measures are checked by --dry-run too.
  auto lacks = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set schedules.momentum=cosine --dry-run"));
  EXPECT_EQ(lacks.exit_code, 2);
  EXPECT_THAT(lacks.err, HasSubstr("schedules.momentum: this optimizer has no \"momentum\"; it "
                                   "has: beta1, beta2, eps, weight_decay"));
  auto monitor = testing::run_command(
      kiln("train " + example("mlp.yaml") +
           " --set 'scheduler={type: reduce_on_plateau, monitor: val/acc}' --dry-run"));
  EXPECT_EQ(monitor.exit_code, 2);
  EXPECT_THAT(monitor.err, HasSubstr("scheduler.monitor: \"val/acc\" is never measured"));
  EXPECT_THAT(monitor.err, HasSubstr("val/accuracy"));
}

TEST(CliErrors, DryRunChecksThePrecisionAndThatThereIsABatch) {
  auto fp16 =
      testing::run_command(kiln("train " + example("mlp.yaml") +
                                " --set train.precision=fp16 --set runtime.device=cpu --dry-run"));
  EXPECT_EQ(fp16.exit_code, 2);
  EXPECT_THAT(fp16.err, HasSubstr("config error at train.precision"));
  EXPECT_THAT(fp16.err, HasSubstr("use bf16"));
  auto empty = testing::run_command(
      kiln("train " + example("mlp.yaml") +
           " --set data.take=10 --set data.drop_last=true --set data.batch_size=32 --dry-run"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.err, HasSubstr("config error at data.batch_size: the training set (10 "
                                   "examples) yields no batch"));
}

// Each (--set, message): a dry run of the mlp example with that --set exits 2 with the message.
template <size_t N>
void expect_dry_runs_refuse(const std::pair<const char*, const char*> (&cases)[N]) {
  for (const auto& [set, message] : cases) {
    auto result =
        testing::run_command(kiln("train " + example("mlp.yaml") + " --dry-run --set " + set));
    EXPECT_EQ(result.exit_code, 2) << set << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr(message)) << set;
  }
}

TEST(CliErrors, ARequiredComponentSetToNullNamesItsPath) {
  const std::pair<const char*, const char*> cases[] = {
      {"scheduler=null", "config error at scheduler: expected a scheduler: NAME or {type: NAME"},
      {"loss=null", "config error at loss: expected a loss: NAME or {type: NAME"},
      {"optimizer=null", "config error at optimizer: expected an optimizer"},
      {"model=null", "config error at model: expected a model: NAME or {type: NAME"},
      {"'callbacks=[null]'", "config error at callbacks[0] (--set): expected a callback"},
      {"data.train=null", "config error at data.train: the training data is required"},
  };
  expect_dry_runs_refuse(cases);
}

// Options that fit only some outputs are checked on one batch before training, and --dry-run
// makes that check too.
TEST(CliErrors, DryRunChecksThatTheLossAndMetricsFitTheModelsOutputs) {
  const std::pair<const char*, const char*> cases[] = {
      {"'loss={type: cross_entropy, class_weights: [1, 2]}'",
       "config error at loss.class_weights: cross_entropy: class_weights has 2 weights but the "
       "logits have 10 classes"},
      {"'metrics=[accuracy, {type: top_k_accuracy, k: 10}]'",
       "config error at metrics[1].k: top_k_accuracy: k = 10 is not below the number of classes"},
      {"'metrics=[accuracy, roc_auc]'", "config error at metrics[1]: roc_auc is for binary tasks"},
      {"'optimizer={type: sgd, nesterov: true}'",
       "config error at optimizer.nesterov (--set): expected boolean false unless momentum > 0"},
  };
  expect_dry_runs_refuse(cases);
}

TEST(CliErrors, TheExportCallbacksOptionsAreCheckedBeforeTraining) {
  const std::pair<const char*, const char*> cases[] = {
      {"'callbacks=[{type: export, portable: true}]'",
       "config error at callbacks[0].portable: a portable graph is an ONNX one: set format: onnx "
       "too"},
      {"'callbacks=[{type: export, format: tflite}]'", "callbacks[0].format"},
  };
  expect_dry_runs_refuse(cases);
}

TEST(CliErrors, DryRunChecksWhatEveryMonitorNames) {
  auto train = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set train.monitor=val/los --dry-run"));
  EXPECT_EQ(train.exit_code, 2);
  EXPECT_THAT(train.err, HasSubstr("train.monitor: \"val/los\" is never measured"));
  EXPECT_THAT(train.err, HasSubstr("did you mean \"val/loss\"?"));
  auto callback = testing::run_command(
      kiln("train " + example("mlp.yaml") +
           " --set 'callbacks=[{type: early_stopping, monitor: val/acuracy}]' --dry-run"));
  EXPECT_EQ(callback.exit_code, 2);
  EXPECT_THAT(callback.err, HasSubstr("callbacks[0].monitor: \"val/acuracy\" is never measured"));
  EXPECT_THAT(callback.err, HasSubstr("did you mean \"val/accuracy\"?"));
}

// --plugin is taken from anywhere on the line; a bad one stops before any work, exit 2.
TEST(CliErrors, PluginProblemsAreUsageErrorsWhereverTheOptionStands) {
  testing::TempDir dir;
  std::string missing = dir.file("libmissing.so");
  for (const std::string& line :
       {"--plugin " + missing + " list", "list --plugin=" + missing + " model",
        "train --plugin " + missing + " " + example("mlp.yaml") + " --dry-run"}) {
    auto result = testing::run_command(kiln(line));
    EXPECT_EQ(result.exit_code, 2) << line;
    EXPECT_THAT(result.err, HasSubstr("usage error: cannot load plugin " + missing +
                                      ": cannot open shared object file"))
        << line;
  }
  auto bare = testing::run_command(kiln("list --plugin"));
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("--plugin needs a shared library"));
}

}  // namespace
}  // namespace kiln
