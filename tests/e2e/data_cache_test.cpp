// data.cache: device through the real binary: a run that holds its data on the device (host
// memory on this CPU machine) trains exactly as one that reads it through the dataset every
// epoch, augmentation and two loader workers included, and resumes exactly; a misspelled value
// is refused at the key.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// Fashion-MNIST's first 1,024 images, augmented as the ResNet example does; 16 steps.
constexpr const char* kConfig = R"(version: 1
name: cache_check
seed: 4
data:
  train: {type: fashion_mnist, split: train, limit: 1024}
  val: {type: fashion_mnist, split: test, limit: 256}
  batch_size: 128
  workers: 2
  transforms:
    train:
      - {type: random_crop, size: 28, padding: 2}
      - {type: random_flip}
      - {type: normalize, mean: 0.286, std: 0.353}
      - {type: random_erasing, p: 0.5}
    eval: [{type: normalize, mean: 0.286, std: 0.353}]
model:
  type: sequential
  layers: [{type: conv2d, out: 8, kernel: 3}, relu, {type: maxpool, kernel: 2}, flatten,
           {type: linear, out: 10}]
loss: cross_entropy
metrics: [accuracy]
optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
train: {max: 2 epochs, validate_every: 1 epoch, log_every: 4 steps, deterministic: true}
runtime: {threads: 1}
)";

std::string train(const testing::TempDir& dir, const std::string& extra) {
  auto run = testing::run_command(std::string(KILN_BINARY) + " train " +
                                  dir.write("config.yaml", kConfig) + " --runs-root " +
                                  dir.file("runs") + extra);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  return testing::run_dir_of(run.out);
}

TEST(DataCache, ARunWithItsDataOnTheDeviceTrainsExactlyAsOneWithout) {
  testing::TempDir plain_dir, cached_dir;
  std::string plain = train(plain_dir, "");
  std::string cached = train(cached_dir, " --set data.cache=device");
  std::string rows = testing::validation_rows(plain);
  EXPECT_THAT(rows, HasSubstr("val,accuracy"));
  EXPECT_EQ(testing::validation_rows(cached), rows);
  EXPECT_EQ(testing::read_file(testing::latest_checkpoint(cached) + "/model.safetensors"),
            testing::read_file(testing::latest_checkpoint(plain) + "/model.safetensors"));
}

// Exact resume: one epoch held on the device, then resumed for the second, ends with the weights
// of the two epochs trained at once.
TEST(DataCache, AResumedRunEndsAsTheUninterruptedOne) {
  testing::TempDir straight_dir, resumed_dir;
  std::string straight = train(straight_dir, " --set data.cache=device");
  std::string resumed = train(resumed_dir, " --set data.cache=device --set 'train.max=1 epoch'");
  auto run = testing::run_command(std::string(KILN_BINARY) + " train --resume " + resumed +
                                  " --set 'train.max=2 epochs'");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(testing::validation_rows(resumed), testing::validation_rows(straight));
  EXPECT_EQ(testing::read_file(testing::latest_checkpoint(resumed) + "/model.safetensors"),
            testing::read_file(testing::latest_checkpoint(straight) + "/model.safetensors"));
}

TEST(DataCache, AMisspelledValueNamesTheKeyAndItsValues) {
  testing::TempDir dir;
  std::string config = dir.write("config.yaml", kConfig);
  auto run = testing::run_command(std::string(KILN_BINARY) + " train " + config + " --runs-root " +
                                  dir.file("runs") + " --set data.cache=devise");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("data.cache"));
  EXPECT_THAT(run.err, HasSubstr("device"));
}

}  // namespace
}  // namespace kiln
