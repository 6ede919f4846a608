// End-to-end: `kiln predict` offline over JSON lines and IDX images, from a run and from its
// export, as JSON lines and CSV; and as the client of `kiln serve`, whose answers equal the
// offline ones.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "kiln/core/json.h"
#include "kiln/io/idx.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace predict_e2e_test {

using ::testing::HasSubstr;
using testing::json_lines;
using testing::run_dir_of;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

class Predict : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    run_ = new std::string(testing::train_and_export_binary(KILN_BINARY, *dir_));
    input_ = new std::string(
        dir_->write("in.jsonl", "[3.0, 1.0]\n[-3.0, -1.0]\n\n[0.5, 0.25]\n[-0.5, 2.0]\n"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete run_;
    delete input_;
  }
  static testing::TempDir* dir_;
  static std::string *run_, *input_;
};

testing::TempDir* Predict::dir_ = nullptr;
std::string* Predict::run_ = nullptr;
std::string* Predict::input_ = nullptr;

TEST_F(Predict, OfflineFromTheRunAndFromItsExportAgree) {
  auto from_export =
      testing::run_command(kiln("predict " + dir_->file("models/binary") + " --input " + *input_));
  ASSERT_EQ(from_export.exit_code, 0) << from_export.err;
  EXPECT_THAT(from_export.err, HasSubstr("predicted 4 examples in"));
  std::vector<Json> lines = json_lines(from_export.out);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["class_ids"], 1);
  EXPECT_EQ(lines[1]["class_ids"], 0);
  EXPECT_EQ(lines[0]["classes"], "1");
  auto from_run = testing::run_command(
      kiln("predict " + *run_ + " --checkpoint last --input " + *input_ + " --format csv"));
  ASSERT_EQ(from_run.exit_code, 0) << from_run.err;
  std::istringstream csv(from_run.out);
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ(header, "class_ids,classes,logits_0,logits_1,probabilities_0,probabilities_1");
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(std::getline(csv, row));
    double p1 = std::stod(row.substr(row.rfind(',') + 1));
    EXPECT_NEAR(p1, lines[i]["probabilities"][1].get<double>(), 1e-5) << row;
  }
}

TEST_F(Predict, ABadLineIsNamedWithItsNumber) {
  std::string bad = dir_->write("bad.jsonl", "[1.0, 2.0]\n[1.0, \"x\"]\n");
  auto run =
      testing::run_command(kiln("predict " + dir_->file("models/binary") + " --input " + bad));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr(bad));
  EXPECT_THAT(run.err, HasSubstr("line 2"));
}

// Found by the seventh outside campaign: JSON lines from /dev/zero took 4.4 GB in 4 s, and from a
// FIFO without a writer waited forever.
TEST_F(Predict, JsonLinesThatAreNoRegularFileAreRefusedByName) {
  std::string zeros = dir_->file("zeros.jsonl"), fifo = dir_->file("fifo.jsonl");
  ASSERT_EQ(symlink("/dev/zero", zeros.c_str()), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& input : {zeros, fifo}) {
    auto run =
        testing::run_command(kiln("predict " + dir_->file("models/binary") + " --input " + input));
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_THAT(run.err, HasSubstr(input + ": is not a regular file"));
  }
}

TEST_F(Predict, TheClientGetsWhatOfflinePredictionComputes) {
  auto offline =
      testing::run_command(kiln("predict " + dir_->file("models/binary") + " --input " + *input_));
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  testing::ChildProcess server(kiln("serve " + dir_->file("models/binary") + " --port 0"));
  std::string port = std::to_string(testing::served_port(server));
  ASSERT_NE(port, "0");
  auto client =
      testing::run_command(kiln("predict --server http://127.0.0.1:" + port +
                                "/v1/models/binary --input " + *input_ + " --concurrency 3"));
  ASSERT_EQ(client.exit_code, 0) << client.err;
  EXPECT_THAT(client.err, HasSubstr("4 requests in"));
  EXPECT_THAT(client.err, HasSubstr("p99"));
  EXPECT_THAT(client.err, HasSubstr("; 0 failed"));
  std::vector<Json> served = json_lines(client.out), computed = json_lines(offline.out);
  ASSERT_EQ(served.size(), computed.size());
  for (size_t i = 0; i < served.size(); ++i) {
    EXPECT_EQ(served[i]["class_ids"], computed[i]["class_ids"]);
    for (int k = 0; k < 2; ++k)
      EXPECT_NEAR(served[i]["probabilities"][k].get<double>(),
                  computed[i]["probabilities"][k].get<double>(), 1e-5);
  }
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

// The client refuses what cannot be JSON lines (it once sent an image line by line), and takes
// only the first line of a token file, refusing a token no header could carry.
TEST_F(Predict, TheClientRefusesABinaryInputAndABadTokenFile) {
  std::string url = "http://127.0.0.1:9/v1/models/binary";  // nothing is sent in either case
  std::string image = dir_->write("image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  auto binary = testing::run_command(kiln("predict --server " + url + " --input " + image));
  EXPECT_EQ(binary.exit_code, 1) << binary.err;
  EXPECT_THAT(binary.err, HasSubstr(image + ", byte offset 0: is not JSON lines"));
  std::string token = dir_->write("token", "se cret\n");
  auto spaced = testing::run_command(
      kiln("predict --server " + url + " --input " + *input_ + " --token-file " + token));
  EXPECT_EQ(spaced.exit_code, 2) << spaced.err;
  EXPECT_THAT(
      spaced.err,
      HasSubstr("the token holds a space, a control character or a byte outside ASCII (0x20)"));
}

// IDX images through a Fashion-MNIST model: answered with the dataset's class names.
TEST(PredictImages, IdxImagesAreScaledAsTheDatasetDoesAndNamedByClass) {
  testing::TempDir dir;
  auto run = testing::run_command(
      kiln(std::string("train ") + KILN_SOURCE_DIR + "/configs/examples/fashion_mnist/mlp.yaml" +
           " --set train.max='2 steps' --set data.train.limit=64 --set data.val_fraction=0" +
           " --set data.test=null --set train.monitor=train/loss --runs-root " + dir.file("runs")));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  io::IdxArray images;
  images.dims = {3, 28, 28};
  images.data.assign(3 * 28 * 28, 0);
  for (size_t i = 0; i < images.data.size(); ++i) images.data[i] = uint8_t(i % 251);
  std::string idx = dir.write("images.idx", io::encode_idx(images));
  auto predicted =
      testing::run_command(kiln("predict " + run_dir_of(run.out) + " --checkpoint last --input " +
                                idx + " --signature serving_default"));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::vector<Json> lines = json_lines(predicted.out);
  ASSERT_EQ(lines.size(), 3u);
  const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                          "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                          "Bag",         "Ankle boot"};
  for (const Json& line : lines)
    EXPECT_EQ(line["classes"], names.at(line["class_ids"].get<size_t>()));

  images.dims = {3, 14, 56};
  std::string wrong = dir.write("wrong.idx", io::encode_idx(images));
  auto refused = testing::run_command(kiln("predict " + run_dir_of(run.out) + " --input " + wrong));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err,
              HasSubstr("holds images of shape [1, 14, 56]; the model takes [1, 28, 28]"));
}

}  // namespace predict_e2e_test
}  // namespace kiln
