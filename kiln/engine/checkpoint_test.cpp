// Checkpoints: bitwise weight round trips, the latest/best pointers, MANIFEST verification of
// damaged files, crash leftovers that must never be picked up, and loading into the wrong model.

#include "kiln/engine/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/trainer_test_rig.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace kiln::engine {
namespace checkpoint_test {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// Linear then batchnorm: parameters and buffers (running statistics, an int64 counter).
std::shared_ptr<models::Model> build(const std::string& layers, int64_t seed) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  return models::build_model(read_spec("model", "{type: sequential, layers: " + layers + "}"), {4});
}

std::shared_ptr<models::Model> trained_model(int64_t seed) {
  auto model = build("[{type: linear, out: 3}, batchnorm]", seed);
  model->train();
  torch::NoGradGuard no_grad;
  model->forward(torch::randn({5, 4}) * 3 + 1);  // moves the running statistics off their init
  return model;
}

bool same_state(const torch::nn::Module& a, const torch::nn::Module& b) {
  auto a_params = a.named_parameters(), b_params = b.named_parameters();
  auto a_buffers = a.named_buffers(), b_buffers = b.named_buffers();
  for (const auto& item : a_params)
    if (!torch::equal(item.value(), b_params[item.key()])) return false;
  for (const auto& item : a_buffers)
    if (!torch::equal(item.value(), b_buffers[item.key()])) return false;
  return true;
}

class CheckpointTest : public ::testing::Test {
 protected:
  std::string save(int64_t step, const models::Model& model) {
    return save_checkpoint(checkpoints(),
                           {step, &model, nullptr, Json{{"step", step}}, "a: 1\n", {}});
  }
  std::string checkpoints() const { return run_.file("checkpoints"); }
  const std::string& run() const { return run_.path(); }

  kiln::testing::TempDir run_;
};

// optimizer.pt damaged past what its MANIFEST catches (the MANIFEST rewritten to match): what
// LibTorch's reader throws becomes a data error naming the file, whatever kind it is.
TEST_F(CheckpointTest, ADamagedOptimizerStateIsADataErrorNamingTheFile) {
  auto model = trained_model(1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  optimizer.zero_grad();
  model->forward(torch::ones({2, 4})).sum().backward();
  optimizer.step();  // momentum buffers in the state
  std::string dir =
      save_checkpoint(checkpoints(), {5, model.get(), &optimizer, Json::object(), "a: 1\n", {}});
  std::string state = io::read_file_bytes(dir + "/optimizer.pt");
  for (const std::string& damaged : {state.substr(0, state.size() / 2), std::string(200, '\x5a'),
                                     state.substr(0, 40) + std::string(state.size() - 40, '\0')}) {
    kiln::write_file_atomic(dir + "/optimizer.pt", damaged);
    torch::optim::SGD fresh(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    EXPECT_THAT([&] { load_optimizer_state(dir, fresh); },
                ::testing::ThrowsMessage<DataError>(HasSubstr(dir + "/optimizer.pt")));
  }
}

TEST_F(CheckpointTest, WeightsAndBuffersRoundTripBitwiseIntoAFreshModel) {
  auto saved = trained_model(1);
  auto fresh = build("[{type: linear, out: 3}, batchnorm]", 2);
  ASSERT_FALSE(same_state(*saved, *fresh));
  load_model_weights(save(7, *saved), *fresh);
  EXPECT_TRUE(same_state(*saved, *fresh));
  EXPECT_EQ(fresh->named_buffers()["layers.1.num_batches_tracked"].item<int64_t>(), 1);
}

TEST_F(CheckpointTest, WritesEveryFileUnderAStepNameAndTheOptimizerWhenGiven) {
  auto model = trained_model(1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  std::string dir = save_checkpoint(
      checkpoints(), {1200, model.get(), &optimizer, Json{{"step", 1200}}, "name: x\n", {}});
  EXPECT_EQ(dir, checkpoints() + "/step-000001200");
  for (const char* file :
       {"model.safetensors", "optimizer.pt", "train_state.json", "config.yaml", "MANIFEST"})
    EXPECT_TRUE(fs::is_regular_file(dir + "/" + file)) << file;
  EXPECT_EQ(read_text_file(dir + "/config.yaml"), "name: x\n");
  EXPECT_EQ(Json::parse(read_text_file(dir + "/train_state.json"))["step"], 1200);
  EXPECT_THAT(read_text_file(dir + "/MANIFEST"),
              MatchesRegex("([0-9a-f]{8} [0-9]+ [a-z_.]+\n){4}"));
  EXPECT_NO_THROW(verify_checkpoint(dir));
}

// An Adam step from `device`'s model, saved; then loaded into a fresh model on `other`.
void expect_optimizer_state_moves(const std::string& checkpoints, torch::Device device,
                                  torch::Device other) {
  auto model = trained_model(1);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.01));
  model->forward(torch::randn({5, 4}, device)).sum().backward();
  optimizer.step();
  std::string dir =
      save_checkpoint(checkpoints, {1, model.get(), &optimizer, Json{{"step", 1}}, "a: 1\n", {}});
  auto resumed = trained_model(2);
  resumed->to(other);
  torch::optim::Adam resumed_optimizer(resumed->parameters(), torch::optim::AdamOptions(0.01));
  load_model_weights(dir, *resumed);
  load_optimizer_state(dir, resumed_optimizer);
  int64_t moments = 0;
  for (const auto& [key, state] : resumed_optimizer.state()) {
    auto& adam = static_cast<torch::optim::AdamParamState&>(*state);
    EXPECT_EQ(adam.exp_avg().device().type(), other.type());
    EXPECT_EQ(adam.exp_avg_sq().device().type(), other.type());
    moments += 1;
  }
  EXPECT_GT(moments, 0);
  resumed->forward(torch::randn({5, 4}, other)).sum().backward();
  EXPECT_NO_THROW(resumed_optimizer.step());
}

TEST_F(CheckpointTest, OptimizerStateOfACudaCheckpointResumesOnTheCpuAndTheOtherWayRound) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs CUDA; this machine has none";
  expect_optimizer_state_moves(run_.file("from_cuda"), torch::kCUDA, torch::kCPU);
  expect_optimizer_state_moves(run_.file("from_cpu"), torch::kCPU, torch::kCUDA);
}

TEST_F(CheckpointTest, LatestNamesTheNewestCheckpoint) {
  auto model = trained_model(1);
  save(5, *model);
  std::string newest = save(10, *model);
  EXPECT_EQ(read_text_file(checkpoints() + "/latest"), "step-000000010\n");
  EXPECT_EQ(find_checkpoint(run(), "last"), newest);
}

// std::filesystem threw on a pointer linked to itself: an internal error (an outside campaign's
// find). It is a kiln error naming the file.
TEST_F(CheckpointTest, APointerLinkedToItselfIsAnErrorNamingIt) {
  save(5, *trained_model(1));
  std::filesystem::remove(checkpoints() + "/latest");
  std::filesystem::create_symlink("latest", checkpoints() + "/latest");
  EXPECT_THAT([&] { find_checkpoint(run(), "last"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(checkpoints() + "/latest")));
}

TEST_F(CheckpointTest, BestFallsBackToLastAndFollowsItsPointerWhenThere) {
  auto model = trained_model(1);
  std::string first = save(5, *model);
  std::string last = save(10, *model);
  EXPECT_EQ(find_checkpoint(run(), "best"), last);
  write_file_atomic(checkpoints() + "/best", "step-000000005\n");
  EXPECT_EQ(find_checkpoint(run(), "best"), first);
  EXPECT_EQ(find_checkpoint(run(), "last"), last);
}

TEST_F(CheckpointTest, AnExplicitDirectoryIsUsedAsIsAndAMissingOneIsAUsageError) {
  std::string dir = save(3, *trained_model(1));
  EXPECT_EQ(find_checkpoint(run(), dir), dir);
  EXPECT_THROW(find_checkpoint(run(), run() + "/no-such-checkpoint"), UsageError);
}

TEST_F(CheckpointTest, ARunWithoutCheckpointsIsAUsageError) {
  for (const char* which : {"last", "best"}) {
    try {
      find_checkpoint(run(), which);
      FAIL() << "found a checkpoint in an empty run for " << which;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(run()));
      EXPECT_THAT(e.what(), HasSubstr("no checkpoint"));
    }
  }
}

// Damages `file` of a fresh checkpoint with `damage` and expects a DataError naming that file.
void expect_corruption_detected(const std::string& dir, const std::string& file,
                                const std::function<void(std::string&)>& damage) {
  std::string path = dir + "/" + file;
  std::string bytes = io::read_file_bytes(path);
  damage(bytes);
  kiln::testing::TempDir scratch;
  fs::rename(scratch.write("damaged", bytes), path);
  try {
    verify_checkpoint(dir);
    ADD_FAILURE() << "accepted a damaged " << file;
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_THAT(e.what(), HasSubstr("MANIFEST"));
  }
}

TEST_F(CheckpointTest, AFlippedByteIsADataErrorNamingTheFile) {
  auto model = trained_model(1);
  std::string dir = save(1, *model);
  expect_corruption_detected(dir, "model.safetensors",
                             [](std::string& b) { b[b.size() - 3] ^= 1; });
  // The same holds through load_model_weights, before any weight is copied.
  auto fresh = build("[{type: linear, out: 3}, batchnorm]", 2);
  EXPECT_THROW(load_model_weights(dir, *fresh), DataError);
  EXPECT_FALSE(same_state(*model, *fresh));
}

TEST_F(CheckpointTest, ATruncatedFileIsADataErrorNamingTheFile) {
  auto model = trained_model(1);
  std::string dir = save(1, *model);
  expect_corruption_detected(dir, "train_state.json",
                             [](std::string& b) { b.resize(b.size() / 2); });
  dir = save(2, *model);
  expect_corruption_detected(dir, "model.safetensors",
                             [](std::string& b) { b.resize(b.size() - 1); });
}

TEST_F(CheckpointTest, AMalformedManifestLineIsADataError) {
  std::string dir = save(1, *trained_model(1));
  write_file_atomic(dir + "/MANIFEST", "not a manifest\n");
  try {
    verify_checkpoint(dir);
    FAIL() << "accepted a malformed MANIFEST";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), dir + "/MANIFEST");
  }
}

TEST_F(CheckpointTest, AManifestNamingAFileOutsideTheCheckpointIsADataError) {
  std::string dir = save(1, *trained_model(1));
  write_file_atomic(dir + "/MANIFEST", "00000000 4 ../../elsewhere.bin\n");
  try {
    verify_checkpoint(dir);
    FAIL() << "followed a MANIFEST out of the checkpoint";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a file of the checkpoint's folder"));
  }
  // A folder named like a step but past int64 is no checkpoint of kiln's.
  EXPECT_EQ(checkpoint_step("runs/x/checkpoints/step-99999999999999999999"), -1);
}

TEST_F(CheckpointTest, AManifestThatLostLinesVouchesForNothing) {
  std::string dir = save(1, *trained_model(1));
  std::string manifest = read_text_file(dir + "/MANIFEST");
  std::string first_line = manifest.substr(0, manifest.find('\n') + 1);
  write_file_atomic(dir + "/MANIFEST", first_line);  // cut at a line boundary
  EXPECT_THROW(verify_checkpoint(dir), DataError);
  write_file_atomic(dir + "/MANIFEST", "");
  try {
    verify_checkpoint(dir);
    FAIL() << "an empty MANIFEST verified a checkpoint";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not listed in the MANIFEST"));
  }
}

TEST_F(CheckpointTest, AListedFileThatIsMissingIsADataErrorOnTheManifest) {
  std::string dir = save(1, *trained_model(1));
  fs::remove(dir + "/train_state.json");
  try {
    verify_checkpoint(dir);
    FAIL() << "verified a checkpoint with a missing file";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), dir + "/MANIFEST");
    EXPECT_THAT(e.what(), HasSubstr("\"train_state.json\", which is missing"));
  }
}

// A model.safetensors replaced by a FIFO or a link to /dev/zero was reported missing (an outside
// campaign's find): it is there, and is no file kiln wrote.
TEST_F(CheckpointTest, AListedFileThatIsNoRegularFileIsNamedSo) {
  std::string dir = save(1, *trained_model(1));
  fs::remove(dir + "/model.safetensors");
  fs::create_symlink("/dev/zero", dir + "/model.safetensors");
  try {
    verify_checkpoint(dir);
    FAIL() << "verified a checkpoint whose weights are /dev/zero";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), dir + "/model.safetensors");
    EXPECT_THAT(e.what(), HasSubstr("is not a regular file"));
    EXPECT_THAT(e.what(), Not(HasSubstr("missing")));
  }
  fs::remove(dir + "/model.safetensors");
  ASSERT_EQ(::mkfifo((dir + "/model.safetensors").c_str(), 0600), 0);
  EXPECT_THROW(verify_checkpoint(dir), DataError);
}

TEST_F(CheckpointTest, AHalfWrittenCheckpointIsNeverFound) {
  // save_checkpoint writes into `<name>.tmp` and renames it when complete; a crash in between
  // leaves only the temporary directory.
  kiln::testing::TempDir scratch;
  fs::create_directories(checkpoints() + "/step-000000020.tmp");
  fs::rename(scratch.write("partial", "half a tensor"),
             checkpoints() + "/step-000000020.tmp/model.safetensors");
  EXPECT_THROW(find_checkpoint(run(), "last"), UsageError);
  EXPECT_THROW(find_checkpoint(run(), "best"), UsageError);

  std::string complete = save(10, *trained_model(1));
  EXPECT_EQ(find_checkpoint(run(), "last"), complete);
  EXPECT_EQ(find_checkpoint(run(), "best"), complete);
}

TEST_F(CheckpointTest, SavingTheSameStepAgainReplacesTheLeftoverTemporaryDirectory) {
  fs::create_directories(checkpoints() + "/step-000000020.tmp");
  kiln::testing::TempDir scratch;
  fs::rename(scratch.write("junk", "stale"), checkpoints() + "/step-000000020.tmp/junk");
  std::string dir = save(20, *trained_model(1));
  EXPECT_FALSE(fs::exists(checkpoints() + "/step-000000020.tmp"));
  EXPECT_FALSE(fs::exists(dir + "/junk"));
  EXPECT_NO_THROW(verify_checkpoint(dir));
}

TEST_F(CheckpointTest, AShapeMismatchNamesTheTensorAndBothShapes) {
  std::string dir = save(1, *build("[{type: linear, out: 3}]", 1));
  auto wider = build("[{type: linear, out: 5}]", 1);
  try {
    load_model_weights(dir, *wider);
    FAIL() << "loaded [3, 4] weights into [5, 4]";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"layers.0."));
    EXPECT_THAT(e.what(), HasSubstr("[3"));
    EXPECT_THAT(e.what(), HasSubstr("[5"));
  }
}

TEST_F(CheckpointTest, AMissingTensorIsNamed) {
  std::string dir = save(1, *build("[{type: linear, out: 3}]", 1));
  auto larger = build("[{type: linear, out: 3}, batchnorm]", 1);
  try {
    load_model_weights(dir, *larger);
    FAIL() << "loaded a checkpoint without the batchnorm tensors";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), MatchesRegex(".*lacks \"layers\\.1\\.[a-z_]+\".*"));
  }
}

TEST_F(CheckpointTest, AnExtraTensorIsNamed) {
  std::string dir = save(1, *trained_model(1));
  auto smaller = build("[{type: linear, out: 3}]", 1);
  try {
    load_model_weights(dir, *smaller);
    FAIL() << "loaded a checkpoint with tensors the model lacks";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), MatchesRegex(".*\"layers\\.1\\.[a-z_]+\" is not part of this model.*"));
  }
}

// Fails the `fail_at`-th file-system step of a checkpoint write (0-based), leaving half of the
// file behind when that step is a write, as a crash or a full disk would; -1 fails none.
class FailingFileSystem : public CheckpointFileSystem {
 public:
  explicit FailingFileSystem(int fail_at) : fail_at_(fail_at) {}
  void write(const std::string& path, const std::string& bytes) override {
    if (fails()) {
      CheckpointFileSystem::write(path, bytes.substr(0, bytes.size() / 2));
      throw IoError("write", path, ENOSPC);
    }
    CheckpointFileSystem::write(path, bytes);
  }
  void make_directory(const std::string& path) override {
    if (fails()) throw IoError("mkdir", path, EIO);
    CheckpointFileSystem::make_directory(path);
  }
  void sync_directory(const std::string& path) override {
    if (fails()) throw IoError("fsync", path, EIO);
    CheckpointFileSystem::sync_directory(path);
  }
  void rename(const std::string& from, const std::string& to) override {
    if (fails()) throw IoError("rename", from, EIO);
    CheckpointFileSystem::rename(from, to);
  }
  void remove_all(const std::string& path) override {
    if (fails()) throw IoError("remove", path, EIO);
    CheckpointFileSystem::remove_all(path);
  }
  int steps = 0;

 private:
  bool fails() { return steps++ == fail_at_; }
  int fail_at_;
};

// Every file a trainer's checkpoint holds: weights, optimizer state, a callback's tensors.
CheckpointContents full_contents(int64_t step, const models::Model& model,
                                 torch::optim::Optimizer& optimizer) {
  return {step, &model, &optimizer, Json{{"step", step}}, "a: 1\n", {{"ema", named_state(model)}}};
}

// Saves `first_step`, then `second_step` failing at file-system step `fail_at`: whatever is
// found afterwards verifies and holds the weights of one of the two saves.
void expect_a_valid_checkpoint_after_failing(int64_t first_step, int64_t second_step, int fail_at) {
  auto before = trained_model(1), after = trained_model(2);
  torch::optim::SGD optimizer(after->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  kiln::testing::TempDir run;
  std::string dir = run.file("checkpoints");
  save_checkpoint(dir, full_contents(first_step, *before, optimizer));
  FailingFileSystem failing(fail_at);
  EXPECT_THROW(save_checkpoint(dir, full_contents(second_step, *after, optimizer), failing),
               IoError);
  std::vector<std::string> warnings;
  std::string found = find_checkpoint(run.path(), "last", &warnings);
  auto probe = trained_model(3);
  load_model_weights(found, *probe);  // verified: it throws for anything damaged
  EXPECT_TRUE(same_state(*probe, *before) || same_state(*probe, *after));
  // A directory under the final name is complete whenever it exists.
  std::string second = dir + fmt::format("/step-{:09d}", second_step);
  if (fs::exists(second)) {
    EXPECT_NO_THROW(verify_checkpoint(second));
  }
}

// Saving step 2 after step 1, and saving step 1 again (a finished run saves its last step again
// after the final validation): failing at each write step never leaves a checkpoint that loads
// as valid but is not.
TEST_F(CheckpointTest, AWriteInterruptedAtAnyStepNeverLeavesAnInvalidCheckpointToLoad) {
  auto model = trained_model(2);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  FailingFileSystem counting(-1);
  kiln::testing::TempDir scratch;
  save_checkpoint(scratch.file("checkpoints"), full_contents(2, *model, optimizer), counting);
  ASSERT_GE(counting.steps, 12);  // 5 files and the MANIFEST, directories, rename, pointer
  for (int fail_at = 0; fail_at < counting.steps; ++fail_at) {
    SCOPED_TRACE("failing step " + std::to_string(fail_at));
    expect_a_valid_checkpoint_after_failing(1, 2, fail_at);
  }
  for (int fail_at = 0; fail_at < counting.steps; ++fail_at) {
    SCOPED_TRACE("saving again, failing step " + std::to_string(fail_at));
    expect_a_valid_checkpoint_after_failing(1, 1, fail_at);
  }
}

}  // namespace checkpoint_test
}  // namespace kiln::engine
