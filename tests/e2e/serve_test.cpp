// End-to-end: a trained run exported and served by `kiln serve` on a real socket, asked by
// cpp-httplib's client as a TensorFlow Serving client would: status, metadata, predict in both
// forms, bad requests, a bearer token, and a new version picked up under concurrent requests
// with none failing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "kiln/core/json.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace serve_e2e_test {

using ::testing::HasSubstr;
using testing::run_dir_of;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

class Serve : public ::testing::Test {
 protected:
  // Trains the binary classifier once for every test here and exports it as version 1.
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    run_ = new std::string(testing::train_and_export_binary(KILN_BINARY, *dir_));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete run_;
  }

  // Starts `kiln serve` on a free port, reading its output up to the line that names the port.
  void start(const std::string& extra = "") {
    server_ = std::make_unique<testing::ChildProcess>(
        kiln("serve " + dir_->file("models/binary") + " --port 0 " + extra));
    port_ = testing::served_port(*server_);
    ASSERT_NE(port_, 0) << "kiln serve ended before it listened";
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  // The server's next output line that contains `text`.
  bool wait_for_line(const std::string& text) {
    std::string line;
    while (server_->read_line(line))
      if (line.find(text) != std::string::npos) return true;
    return false;
  }
  Json post(const std::string& path, const std::string& body, int expected = 200) {
    httplib::Result result = client_->Post(path, body, "application/json");
    EXPECT_TRUE(result) << path;
    if (!result) return Json();
    EXPECT_EQ(result->status, expected) << result->body;
    return Json::parse(result->body);
  }
  void TearDown() override {
    if (!server_) return;
    server_->signal(SIGTERM);
    EXPECT_EQ(server_->wait(), 0);
  }

  static testing::TempDir* dir_;
  static std::string* run_;
  std::unique_ptr<testing::ChildProcess> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

testing::TempDir* Serve::dir_ = nullptr;
std::string* Serve::run_ = nullptr;

TEST_F(Serve, AnswersStatusMetadataAndPredictInBothForms) {
  start();
  httplib::Result status = client_->Get("/v1/models/binary");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, 200);
  EXPECT_EQ(Json::parse(status->body)["model_version_status"][0]["state"], "AVAILABLE");
  httplib::Result metadata = client_->Get("/v1/models/binary/versions/1/metadata");
  ASSERT_TRUE(metadata);
  Json signature =
      Json::parse(metadata->body)["metadata"]["signature_def"]["signature_def"]["serving_default"];
  EXPECT_EQ(signature["inputs"]["input"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(signature["outputs"]["probabilities"]["tensor_shape"]["dim"][1]["size"], "2");
  EXPECT_EQ(signature["method_name"], "tensorflow/serving/predict");

  Json rows = post("/v1/models/binary:predict", R"({"instances": [[3.0, 1.0], [-3.0, -1.0]]})");
  ASSERT_EQ(rows["predictions"].size(), 2u);
  EXPECT_EQ(rows["predictions"][0]["class_ids"], 1);
  EXPECT_EQ(rows["predictions"][1]["class_ids"], 0);
  Json columns = post("/v1/models/binary/versions/1:predict",
                      R"({"inputs": {"input": [[3.0, 1.0], [-3.0, -1.0]]}})");
  for (int i = 0; i < 2; ++i) {
    double p0 = columns["outputs"]["probabilities"][i][0],
           p1 = columns["outputs"]["probabilities"][i][1];
    EXPECT_NEAR(p0 + p1, 1.0, 1e-6);
    EXPECT_NEAR(p1, rows["predictions"][i]["probabilities"][1].get<double>(), 1e-6);
  }
  EXPECT_EQ(columns["outputs"]["classes"], Json::array({"1", "0"}));

  httplib::Result metrics = client_->Get("/monitoring/prometheus/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(
      metrics->body,
      HasSubstr("kiln_serving_requests_total{model=\"binary\",api=\"predict\",code=\"200\"} 2"));
  EXPECT_THAT(metrics->body, HasSubstr("kiln_serving_batch_examples_count{model=\"binary\"} 2"));
  EXPECT_THAT(metrics->body, HasSubstr("kiln_serving_versions{model=\"binary\"} 1"));
}

TEST_F(Serve, BadRequestsGetA4xxAndTheServerStaysUp) {
  start("--max-body-bytes 2000");
  auto error = [&](const std::string& body, int status) {
    return post("/v1/models/binary:predict", body, status)["error"].get<std::string>();
  };
  EXPECT_THAT(error("{\"instances\": [[1, 2]", 400), HasSubstr("the request body is not JSON"));
  EXPECT_THAT(error(R"({"instances": [[1, 2, 3]]})", 400), HasSubstr("has shape [1, 3]"));
  EXPECT_THAT(error(R"({"instances": [[1, "a"]]})", 400), HasSubstr("is not of its type"));
  post("/v1/models/none:predict", R"({"instances": [[1, 2]]})", 404);
  post("/v1/models/binary/versions/9:predict", R"({"instances": [[1, 2]]})", 404);
  post("/v1/models/binary:predict", R"({"signature_name": "x", "instances": [[1, 2]]})", 400);
  Json big = post("/v1/models/binary:predict", std::string(3000, ' '), 413);
  EXPECT_THAT(big["error"].get<std::string>(), HasSubstr("over 2000 bytes"));
  post("/v1/models/binary:predict", R"({"instances": [[1, 2]]})", 200);  // still serving
}

// A server that would serve nothing does not start: a folder that is not there, one without
// versions, and a label on a version that is not loaded each end it at once, naming the folder.
TEST_F(Serve, AServerThatWouldServeNothingDoesNotStart) {
  auto missing = testing::run_command(kiln("serve " + dir_->file("models/nothing") + " --port 0"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err,
              HasSubstr(dir_->file("models/nothing") + ": model nothing: no such folder"));
  std::string empty = dir_->file("empty/model");
  std::filesystem::create_directories(empty);
  auto none = testing::run_command(kiln("serve " + empty + " --port 0"));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("model model: no version loaded from this folder"));
  std::string config = dir_->write(
      "models.yaml", "model_config_list:\n  config:\n    - name: binary\n      base_path: " +
                         dir_->file("models/binary") +
                         "\n      model_version_policy: {all: {}}\n      version_labels: "
                         "{stable: 7}\n");
  auto label = testing::run_command(kiln("serve --model-config " + config + " --port 0"));
  EXPECT_EQ(label.exit_code, 1) << label.out;
  EXPECT_THAT(label.err, HasSubstr("label \"stable\" names version 7, which is not loaded"));
}

TEST_F(Serve, ATokenIsRequiredWhenGiven) {
  // The file's first line is the token (a comment after it is not part of it); no batcher either.
  start("--max-batch 0 --token-file " + dir_->write("token", "s3cret\n# rotated monthly\n"));
  post("/v1/models/binary:predict", R"({"instances": [[1, 2]]})", 401);
  client_->set_bearer_token_auth("s3cret");
  post("/v1/models/binary:predict", R"({"instances": [[1, 2]]})", 200);
  httplib::Result health = httplib::Client("127.0.0.1", port_).Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(Serve, ANewVersionIsServedUnderLoadWithoutAFailedRequest) {
  start("--poll-seconds 0.05");
  std::atomic<bool> done{false};
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", port_);
      while (!done) {
        httplib::Result result = client.Post("/v1/models/binary:predict",
                                             R"({"instances": [[1.0, 2.0]]})", "application/json");
        (result && result->status == 200 ? answered : failed) += 1;
      }
    });
  testing::CommandResult exported =
      testing::run_command(kiln("export " + *run_ + " --to " + dir_->file("models")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(wait_for_line("version 1 retired"));
  int before = answered;
  while (answered < before + 20) std::this_thread::yield();  // requests answered by version 2
  done = true;
  for (auto& client : clients) client.join();
  EXPECT_EQ(failed, 0);
  httplib::Result status = client_->Get("/v1/models/binary");
  ASSERT_TRUE(status);
  EXPECT_EQ(Json::parse(status->body)["model_version_status"][0]["version"], "2");
}

// SIGTERM while a request waits in the batcher (a batch timeout of 2 s): it is answered before
// the server exits, and the server said it was draining it.
TEST_F(Serve, SigtermAnswersTheRequestInFlightFirst) {
  start("--max-batch 64 --batch-timeout-us 2000000");
  int status = 0;
  std::thread request([&] {
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result = client.Post("/v1/models/binary:predict",
                                         R"({"instances": [[1.0, 2.0]]})", "application/json");
    status = result ? result->status : -1;
  });
  while (true) {  // until the server counts the request as in flight
    httplib::Result metrics = client_->Get("/monitoring/prometheus/metrics");
    if (metrics && metrics->body.find("kiln_serving_requests_in_flight 1") != std::string::npos)
      break;
  }
  server_->signal(SIGTERM);
  EXPECT_TRUE(wait_for_line("stopping: draining 1 request(s) in flight"));
  request.join();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server_->wait(), 0);
  server_.reset();
}

}  // namespace serve_e2e_test
}  // namespace kiln
