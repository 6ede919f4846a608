// End-to-end: `kiln serve --grpc-port` asked over TensorFlow Serving's gRPC API by a Python client
// whose stubs grpc_tools generates from kiln's copies of TensorFlow Serving's .proto files
// (tests/grpc/grpc_vs_rest.py): status, metadata and predict answer what the REST API answers on
// the same server, its errors carry TensorFlow Serving's codes and messages, and the token is
// asked for. `kiln predict --server grpc://` writes what `--server http://` writes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "kiln/core/json.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace serve_grpc_e2e_test {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string python_client() {
  return std::string("/usr/bin/python3 ") + KILN_SOURCE_DIR + "/tests/grpc/grpc_vs_rest.py";
}

class ServeGrpc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    testing::train_and_export_binary(KILN_BINARY, *dir_);
  }
  static void TearDownTestSuite() { delete dir_; }

  void start(const std::string& extra = "") {
    server_ = std::make_unique<testing::ChildProcess>(
        kiln("serve " + dir_->file("models/binary") + " --port 0 --grpc-port 0 " + extra));
    ports_ = testing::served_ports(*server_);
    ASSERT_NE(ports_.rest, 0) << "kiln serve ended before it listened";
    ASSERT_NE(ports_.grpc, 0) << "kiln serve named no gRPC port";
  }
  std::string address(int port) const { return "127.0.0.1:" + std::to_string(port); }
  void TearDown() override {
    if (!server_) return;
    server_->signal(SIGTERM);
    EXPECT_EQ(server_->wait(), 0);
  }

  static testing::TempDir* dir_;
  std::unique_ptr<testing::ChildProcess> server_;
  testing::ServedPorts ports_;
};

testing::TempDir* ServeGrpc::dir_ = nullptr;

TEST_F(ServeGrpc, APythonClientGetsWhatRestAnswersWithTheTokenAsked) {
  start("--token-file " + dir_->write("token", "s3cret\n"));
  std::string instances = dir_->write("instances.jsonl", "[3.0, 1.0]\n[-3.0, -1.0]\n[0.5, 0.25]\n");
  auto checked = testing::run_command(python_client() + " --grpc " + address(ports_.grpc) +
                                      " --rest " + address(ports_.rest) +
                                      " --model binary --token s3cret --instances " + instances);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  Json report = Json::parse(checked.out);
  for (const char* check :
       {"status equals REST's", "metadata equals REST's", "predict equals REST's",
        "output_filter keeps one output", "DT_HALF is INVALID_ARGUMENT",
        "unknown signature is FAILED_PRECONDITION", "status of an unknown model is NOT_FOUND",
        "no model_spec is INVALID_ARGUMENT", "no token is UNAUTHENTICATED"})
    EXPECT_EQ(report[check]["ok"], true) << check << ": " << report[check].dump();
}

TEST_F(ServeGrpc, KilnPredictOverGrpcWritesWhatItWritesOverRest) {
  start();
  std::string instances = dir_->write("lines.jsonl", "[3.0, 1.0]\n[-3.0, -1.0]\n[1, 2, 3]\n");
  auto over_grpc =
      testing::run_command(kiln("predict --server grpc://" + address(ports_.grpc) +
                                "/v1/models/binary --input " + instances + " --concurrency 2"));
  auto over_rest = testing::run_command(kiln("predict --server http://" + address(ports_.rest) +
                                             "/v1/models/binary --input " + instances));
  std::vector<Json> grpc_lines = testing::json_lines(over_grpc.out),
                    rest_lines = testing::json_lines(over_rest.out);
  ASSERT_EQ(grpc_lines.size(), 3u) << over_grpc.out << over_grpc.err;
  ASSERT_EQ(rest_lines.size(), 3u) << over_rest.out << over_rest.err;
  EXPECT_EQ(grpc_lines[0], rest_lines[0]);
  EXPECT_EQ(grpc_lines[1], rest_lines[1]);
  EXPECT_EQ(grpc_lines[0]["class_ids"], 1);
  // A line of the wrong shape is refused by both, one line each, and the run goes on.
  EXPECT_TRUE(grpc_lines[2].contains("error")) << grpc_lines[2].dump();
  EXPECT_TRUE(rest_lines[2].contains("error")) << rest_lines[2].dump();
  EXPECT_THAT(over_grpc.err, HasSubstr("3 requests"));
}

TEST_F(ServeGrpc, APortInUseIsAClearErrorAndAKilnWithoutAServerSaysSo) {
  start();
  auto clash = testing::run_command(kiln("serve " + dir_->file("models/binary") +
                                         " --port 0 --grpc-port " + std::to_string(ports_.grpc)));
  EXPECT_NE(clash.exit_code, 0);
  EXPECT_THAT(clash.err,
              HasSubstr("cannot listen for gRPC on 127.0.0.1:" + std::to_string(ports_.grpc)));
  auto nobody =
      testing::run_command(kiln("predict --server grpc://127.0.0.1:1/v1/models/binary "
                                "--input " +
                                dir_->write("one.jsonl", "[1.0, 2.0]\n")));
  EXPECT_NE(nobody.exit_code, 0);
  EXPECT_THAT(nobody.err, HasSubstr("GetModelMetadata failed"));
}

// A regressor over a raw feature (the size of a thing by its colour), trained, exported and served:
// gRPC's Regress of tf.Examples answers what :regress answers for the same examples.
TEST(ServeGrpcRegress, RegressOfExamplesAnswersWhatRestAnswers) {
  testing::TempDir dir;
  std::string rows = "color,size\n";
  const char* colors[] = {"red", "blue", "green"};
  for (int i = 0; i < 120; ++i)
    rows += std::string(colors[i % 3]) + "," + (i % 3 == 0 ? "8.0" : "2.0") + "\n";
  std::string csv = dir.write("sizes.csv", rows);
  std::string config = dir.write(
      "sizes.yaml",
      "version: 1\nname: sizes\nseed: 1\ndata:\n"
      "  train: {type: csv, file: " +
          csv +
          ", input: [color], target: size}\n"
          "  val: {type: csv, file: " +
          csv +
          ", input: [color], target: size}\n"
          "  columns: {color: categorical}\n  batch_size: 16\n"
          "model: {type: sequential, layers: [{type: linear, out: 1}]}\n"
          "loss: mse\noptimizer: {type: adam, lr: 0.1}\n"
          "train: {max: 3 epochs, monitor: val/loss, mode: min}\nruntime: {threads: 1}\n");
  auto trained =
      testing::run_command(kiln("train " + config + " --quiet --runs-root " + dir.path()));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  auto exported = testing::run_command(
      kiln("export " + testing::run_dir_of(trained.out) + " --to " + dir.file("models")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  testing::ChildProcess server(
      kiln("serve " + dir.file("models/sizes") + " --port 0 --grpc-port 0"));
  testing::ServedPorts ports = testing::served_ports(server);
  ASSERT_NE(ports.grpc, 0) << "kiln serve named no gRPC port";
  auto checked = testing::run_command(
      python_client() + " --grpc 127.0.0.1:" + std::to_string(ports.grpc) +
      " --rest 127.0.0.1:" + std::to_string(ports.rest) + " --model sizes --regress --examples " +
      dir.write("examples.json", R"([{"color": "red"}, {"color": "blue"}, {"color": "teal"}])"));
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_EQ(Json::parse(checked.out)["regress equals REST's"]["ok"], true) << checked.out;
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

}  // namespace serve_grpc_e2e_test
}  // namespace kiln
