// End-to-end: a model scripted and saved by PyTorch (tests/golden/make_torchscript_models.py)
// served by `kiln serve` as TensorFlow Serving would serve a SavedModel: status, metadata, and
// predictions in both forms equal to what PyTorch computed; `kiln predict` offline agrees.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <sstream>

#include "kiln/core/json.h"
#include "kiln/core/text_file.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace serve_torchscript_e2e_test {

using ::testing::HasSubstr;

const std::string kFolders = std::string(KILN_SOURCE_DIR) + "/tests/golden/torchscript";

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

void expect_rows_near(const Json& got, const Json& want) {
  ASSERT_EQ(got.size(), want.size()) << got.dump();
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_NEAR(got[k].get<double>(), want[k].get<double>(), 1e-5) << k;
}

TEST(ServeTorchScript, AClientOfTensorFlowServingGetsPyTorchsOutputs) {
  Json expected = Json::parse(read_text_file(kFolders + "/expected.json"));
  testing::ChildProcess server(kiln("serve " + kFolders + "/classifier --port 0"));
  int port = testing::served_port(server);
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  httplib::Client client("127.0.0.1", port);

  httplib::Result status = client.Get("/v1/models/classifier");
  ASSERT_TRUE(status);
  EXPECT_EQ(Json::parse(status->body)["model_version_status"][0]["state"], "AVAILABLE");
  httplib::Result metadata = client.Get("/v1/models/classifier/metadata");
  ASSERT_TRUE(metadata);
  Json signature =
      Json::parse(metadata->body)["metadata"]["signature_def"]["signature_def"]["serving_default"];
  EXPECT_EQ(signature["inputs"]["input"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(signature["outputs"]["classes"]["dtype"], "DT_STRING");
  EXPECT_EQ(signature["method_name"], "tensorflow/serving/predict");

  Json row = {{"instances", expected["inputs"]}};
  httplib::Result answer =
      client.Post("/v1/models/classifier:predict", row.dump(), "application/json");
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  Json predictions = Json::parse(answer->body)["predictions"];
  const Json& want = expected["classifier"];
  ASSERT_EQ(predictions.size(), 5u);
  const std::vector<std::string> labels = {"cat", "dog", "owl"};
  for (size_t i = 0; i < 5; ++i) {
    expect_rows_near(predictions[i]["logits"], want["logits"][i]);
    expect_rows_near(predictions[i]["probabilities"], want["probabilities"][i]);
    EXPECT_EQ(predictions[i]["class_ids"], want["class_ids"][i]);
    EXPECT_EQ(predictions[i]["classes"], labels.at(want["class_ids"][i].get<size_t>()));
  }
  Json columnar = {{"inputs", expected["inputs"]}};
  answer = client.Post("/v1/models/classifier:predict", columnar.dump(), "application/json");
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  Json outputs = Json::parse(answer->body)["outputs"];
  for (size_t i = 0; i < 5; ++i) expect_rows_near(outputs["logits"][i], want["logits"][i]);

  Json wrong = {{"instances", {{1.0, 2.0}}}};
  answer = client.Post("/v1/models/classifier:predict", wrong.dump(), "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 400);
  EXPECT_THAT(answer->body, HasSubstr("the signature takes [-1, 4]"));
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

TEST(ServeTorchScript, PredictOfflineGivesTheSame) {
  testing::TempDir dir;
  Json expected = Json::parse(read_text_file(kFolders + "/expected.json"));
  std::string lines;
  for (const Json& row : expected["inputs"]) lines += row.dump() + "\n";
  auto predicted = testing::run_command(
      kiln("predict " + kFolders + "/two_heads --input " + dir.write("in.jsonl", lines)));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::istringstream out(predicted.out);
  size_t i = 0;
  for (std::string line; std::getline(out, line); ++i) {
    Json got = Json::parse(line);
    expect_rows_near(got["kind/probabilities"], expected["two_heads"]["kind/probabilities"][i]);
    expect_rows_near(got["size/predictions"], expected["two_heads"]["size/predictions"][i]);
  }
  EXPECT_EQ(i, 5u);
}

}  // namespace serve_torchscript_e2e_test
}  // namespace kiln
