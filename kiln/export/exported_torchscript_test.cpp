// TorchScript version folders: models scripted and saved by PyTorch (tests/golden/
// make_torchscript_models.py) give through their signatures what PyTorch computed for them, and a
// damaged folder is refused naming the file and the reason.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/export/exported_model.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace kiln::exports {
namespace exported_torchscript_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kFolders = std::string(KILN_GOLDEN_DIR) + "/torchscript";

Json expected() { return Json::parse(read_text_file(kFolders + "/expected.json")); }

torch::Tensor tensor_of(const Json& rows) {
  std::vector<float> values;
  for (const Json& row : rows)
    for (const Json& value : row) values.push_back(value.get<float>());
  return torch::tensor(values).reshape({static_cast<int64_t>(rows.size()), -1});
}

void expect_close(const torch::Tensor& got, const Json& want, const std::string& name) {
  torch::Tensor wanted = tensor_of(want);
  ASSERT_EQ(got.sizes(), wanted.sizes()) << name;
  EXPECT_TRUE(torch::allclose(got.to(torch::kFloat32), wanted, 1e-5, 1e-5)) << name << "\n"
                                                                            << got << "\n"
                                                                            << wanted;
}

std::map<std::string, torch::Tensor> run_default(ExportedModel& model) {
  c10::InferenceMode inference;
  return model.run(*model.signature("serving_default"), tensor_of(expected()["inputs"]));
}

TEST(ExportedTorchScript, AClassifierGivesPyTorchsOutputsAndItsLabels) {
  auto model = ExportedModel::load(kFolders + "/classifier/1", torch::kCPU);
  EXPECT_EQ(model->name(), "classifier");
  std::map<std::string, torch::Tensor> outputs = run_default(*model);
  Json want = expected()["classifier"];
  expect_close(outputs.at("logits"), want["logits"], "logits");
  expect_close(outputs.at("probabilities"), want["probabilities"], "probabilities");
  std::vector<int64_t> ids(outputs.at("class_ids").data_ptr<int64_t>(),
                           outputs.at("class_ids").data_ptr<int64_t>() + 5);
  EXPECT_EQ(Json(ids), want["class_ids"]);
  const serving::Signature& signature = *model->signature("serving_default");
  serving::HostTensor classes = model->to_host(signature.outputs.at("classes"), outputs["classes"]);
  const std::vector<std::string> labels = {"cat", "dog", "owl"};
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(classes.strings[i], labels[size_t(ids[i])]);
}

TEST(ExportedTorchScript, OptimizedForInferenceItGivesTheSame) {
  auto model = ExportedModel::load(kFolders + "/classifier/1", torch::kCPU);
  EXPECT_EQ(model->optimize_for_inference(), "frozen and optimized for inference");
  std::map<std::string, torch::Tensor> outputs = run_default(*model);
  expect_close(outputs.at("logits"), expected()["classifier"]["logits"], "logits");
}

TEST(ExportedTorchScript, ADictOfOutputsIsTakenByKey) {
  auto model = ExportedModel::load(kFolders + "/two_heads/1", torch::kCPU);
  std::map<std::string, torch::Tensor> outputs = run_default(*model);
  Json want = expected()["two_heads"];
  expect_close(outputs.at("kind/probabilities"), want["kind/probabilities"], "kind");
  expect_close(outputs.at("size/predictions"), want["size/predictions"], "size");
}

// A copy of the classifier's version folder to damage.
std::string copy_of_classifier(const kiln::testing::TempDir& dir) {
  std::string version = dir.file("classifier/1");
  fs::create_directories(version);
  for (const char* file : {"model.pt", "model.yaml"})
    fs::copy_file(kFolders + "/classifier/1/" + file, version + "/" + file);
  return version;
}

std::string refusal(const std::string& version) {
  try {
    ExportedModel::load(version, torch::kCPU);
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded " << version;
  return "";
}

void edit_yaml(const std::string& version, const std::function<void(Json&)>& change) {
  Json yaml = Json::parse(read_text_file(version + "/model.yaml"));
  change(yaml);
  write_file_atomic(version + "/model.yaml", yaml.dump());
}

TEST(ExportedTorchScript, AMissingOrDamagedModelFileIsRefusedByName) {
  kiln::testing::TempDir dir;
  std::string version = copy_of_classifier(dir);
  std::string model = io::read_file_bytes(version + "/model.pt");
  write_file_atomic(version + "/model.pt", model.substr(0, model.size() / 2));
  EXPECT_THAT(refusal(version), HasSubstr(version + "/model.pt: is not a TorchScript model"));
  fs::remove(version + "/model.pt");
  EXPECT_THAT(refusal(version), HasSubstr("model.pt: missing"));
}

TEST(ExportedTorchScript, SignaturesTheModelCannotGiveAreRefused) {
  kiln::testing::TempDir dir;
  std::string version = copy_of_classifier(dir);
  edit_yaml(version, [](Json& yaml) {
    yaml["signatures"]["serving_default"]["outputs"]["logits"]["from"] = "scores";
  });
  EXPECT_THAT(refusal(version), HasSubstr("comes from the model's output \"scores\""));
  edit_yaml(version, [](Json& yaml) {
    Json& logits = yaml["signatures"]["serving_default"]["outputs"]["logits"];
    logits["from"] = "";
    logits["op"] = "layer";
  });
  EXPECT_THAT(refusal(version), HasSubstr("a TorchScript model does not expose"));
  edit_yaml(version, [](Json& yaml) {
    yaml["signatures"]["serving_default"]["outputs"]["logits"] = {{"dtype", "float32"},
                                                                  {"shape", {-1, 7}}};
  });
  EXPECT_THAT(refusal(version), HasSubstr("output logits is declared [-1, 7]"));
  edit_yaml(version, [](Json& yaml) { yaml["format"] = "onnx"; });
  EXPECT_THAT(refusal(version), HasSubstr("`format: torchscript` beside a TorchScript model.pt"));
}

TEST(ExportedTorchScript, AReaderThatIsNoDatasetSpecIsRefused) {
  kiln::testing::TempDir dir;
  std::string version = copy_of_classifier(dir);
  edit_yaml(version, [](Json& yaml) { yaml["reader"] = {{"type", 3}}; });
  EXPECT_THAT(refusal(version), HasSubstr("`reader` is a dataset spec"));
  edit_yaml(version, [](Json& yaml) { yaml["reader"] = {{"type", "csv"}, {"target", "y"}}; });
  EXPECT_EQ(ExportedModel::load(version, torch::kCPU)->reader()["target"], "y");
}

}  // namespace exported_torchscript_test
}  // namespace kiln::exports
