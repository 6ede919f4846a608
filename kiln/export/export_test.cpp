// kiln export: a checkpoint written as the next version folder (model.yaml, model.safetensors),
// loaded back without the run to compute what the checkpoint's model computes; damaged versions
// refused naming their file.

#include "kiln/export/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "kiln/core/config.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/export/exported_model.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/manifest.h"
#include "tests/support/temp_dir.h"

namespace kiln::exports {
using namespace experiment;
namespace export_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kConfig = R"(
name: tiny
data:
  train: {type: idx, images: nowhere-images.gz, labels: nowhere-labels.gz}
  transforms: {eval: [{type: normalize, mean: 0.5, std: 0.25}]}
model: {type: sequential, layers: [flatten, {type: linear, out: 3}]}
)";

// A checkpoint of kConfig's classifier for examples of shape [2, 5] under dir/run; with `ema`,
// an ema.safetensors of other weights beside it.
std::string saved_checkpoint(const kiln::testing::TempDir& dir, bool ema = false) {
  experiment::ExperimentConfig config =
      experiment::parse_experiment(load_config({dir.write("c.yaml", kConfig)}, {}));
  std::shared_ptr<models::Model> model = models::build_model(config.model.network, {2, 5});
  fs::create_directories(dir.file("run/checkpoints"));
  engine::CheckpointContents contents;
  contents.step = 7;
  contents.model = model.get();
  contents.config_yaml = to_yaml(experiment::resolved_config(config));
  contents.inputs = inputs_json({ModelInput{"input", {2, 5}, torch::kFloat32, std::nullopt}},
                                {"cat", "dog", "owl"});
  if (ema) {
    engine::NamedTensors averaged = engine::named_state(*model);
    for (auto& [name, tensor] : averaged) tensor = torch::full_like(tensor, 0.125);
    contents.tensor_files["ema"] = averaged;
  }
  return engine::save_checkpoint(dir.file("run/checkpoints"), contents);
}

TEST(Export, WritesTheNextVersionWithItsModelYamlAndWeights) {
  kiln::testing::TempDir dir;
  std::string checkpoint = saved_checkpoint(dir);
  ExportedVersion first = export_model({dir.file("run"), "last", "", ""});
  EXPECT_EQ(first.version, 1);
  EXPECT_EQ(first.directory, dir.file("run/export/tiny/1"));
  EXPECT_EQ(first.checkpoint, checkpoint);
  ExportedVersion second = export_model({checkpoint, "", dir.file("models"), "renamed"});
  EXPECT_EQ(second.directory, dir.file("models/renamed/1"));
  EXPECT_EQ(export_model({dir.file("run"), "last", "", ""}).version, 2);
  // A portable graph is an ONNX one: asked for alone, nothing is written.
  EXPECT_THAT(
      [&] {
        export_model({dir.file("run"), "last", "", "", "kiln", true});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("--portable writes model.onnx: give --format onnx")));
  EXPECT_FALSE(fs::exists(dir.file("run/export/tiny/3")));

  Json yaml = load_config_file(first.directory + "/model.yaml");
  EXPECT_EQ(yaml["format"], "kiln.export");
  EXPECT_EQ(yaml["name"], "tiny");
  EXPECT_EQ(yaml["source"]["step"], 7);
  EXPECT_EQ(yaml["model"]["type"], "sequential");
  EXPECT_EQ(yaml["inputs"][0]["shape"], Json::array({2, 5}));
  EXPECT_EQ(yaml["transforms"][0]["type"], "normalize");
  EXPECT_EQ(yaml["labels"], Json::array({"cat", "dog", "owl"}));
  const Json& outputs = yaml["signatures"]["serving_default"]["outputs"];
  EXPECT_EQ(outputs["classes"]["dtype"], "string");
  EXPECT_EQ(outputs["class_ids"]["shape"], Json::array({-1}));
  EXPECT_EQ(outputs["probabilities"]["shape"], Json::array({-1, 3}));
  EXPECT_EQ(outputs["logits"]["op"], "identity");
  EXPECT_EQ(yaml["signatures"]["serving_default"]["inputs"]["input"]["shape"],
            Json::array({-1, 2, 5}));
  // The embedding is the input of the last layer: the flattened example.
  EXPECT_EQ(yaml["signatures"]["embed"]["outputs"]["embedding"]["shape"], Json::array({-1, 10}));
  EXPECT_TRUE(fs::exists(first.directory + "/model.safetensors"));
  EXPECT_NO_THROW(engine::verify_manifest(first.directory, "version folder"));
  // Nothing half-written is left beside the versions.
  for (const auto& entry : fs::directory_iterator(dir.file("run/export/tiny")))
    EXPECT_NE(entry.path().filename().string()[0], '.');
}

TEST(Export, TheLoadedVersionComputesWhatTheCheckpointsModelDoes) {
  kiln::testing::TempDir dir;
  std::string checkpoint = saved_checkpoint(dir);
  ExportedVersion exported = export_model({checkpoint, "", "", ""});
  auto loaded = ExportedModel::load(exported.directory, torch::kCPU);
  OpenedModel opened = open_model(checkpoint, "", torch::kCPU);

  torch::Tensor input = torch::rand({4, 2, 5});
  auto outputs = loaded->run(*loaded->signature("serving_default"), input);
  torch::Tensor expected = opened.model->forward((input - 0.5) / 0.25);
  EXPECT_TRUE(torch::allclose(outputs.at("logits"), expected, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(outputs.at("probabilities"), expected.softmax(1)));
  EXPECT_TRUE(torch::equal(outputs.at("class_ids"), expected.argmax(1)));

  const serving::SignatureOutput& classes =
      loaded->signature("serving_default")->outputs.at("classes");
  serving::HostTensor host = loaded->to_host(classes, outputs.at("classes"));
  ASSERT_EQ(host.strings.size(), 4u);
  const char* labels[] = {"cat", "dog", "owl"};
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(host.strings[i], labels[expected.argmax(1)[i].item<int64_t>()]);

  auto embedded = loaded->run(*loaded->signature("embed"), input);
  EXPECT_TRUE(torch::allclose(embedded.at("embedding"), ((input - 0.5) / 0.25).reshape({4, 10})));
}

TEST(Export, TheEmaWeightsAreExportedWhenTheRunKeptThem) {
  kiln::testing::TempDir dir;
  ExportedVersion exported = export_model({saved_checkpoint(dir, /*ema=*/true), "", "", ""});
  EXPECT_EQ(fs::path(exported.weights).filename(), "ema.safetensors");
  engine::NamedTensors weights =
      engine::read_tensor_file(exported.directory + "/model.safetensors");
  for (const auto& [name, tensor] : weights)
    EXPECT_TRUE(torch::allclose(tensor, torch::full_like(tensor, 0.125))) << name;
}

// A multi_head model: serving_default gives every head's outputs as HEAD/NAME, and each head is
// a signature of its own.
TEST(Export, EachHeadOfAMultiHeadModelIsServed) {
  kiln::testing::TempDir dir;
  experiment::ExperimentConfig config =
      experiment::parse_experiment(load_config({dir.write("c.yaml", R"(
name: heads
data:
  train: {type: idx, images: nowhere-images.gz, labels: nowhere-labels.gz}
model:
  type: multi_head
  backbone: [flatten, {type: linear, out: 4}]
  heads:
    - {name: kind, layers: [{type: linear, out: 3}], loss: cross_entropy}
    - {name: price, layers: [{type: linear, out: 1}], loss: mse, target: price}
)")},
                                               {}));
  auto model = models::build_model(config.model.network, {2, 5});
  fs::create_directories(dir.file("run/checkpoints"));
  engine::CheckpointContents contents;
  contents.model = model.get();
  contents.config_yaml = to_yaml(experiment::resolved_config(config));
  contents.inputs = inputs_json({ModelInput{"input", {2, 5}, torch::kFloat32, std::nullopt}});
  std::string checkpoint = engine::save_checkpoint(dir.file("run/checkpoints"), contents);
  auto loaded = ExportedModel::load(export_model({checkpoint, "", "", ""}).directory, torch::kCPU);
  const serving::Signature* main = loaded->signature("serving_default");
  ASSERT_NE(main, nullptr);
  std::vector<std::string> names;
  for (const auto& [name, output] : main->outputs) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("kind/class_ids", "kind/classes", "kind/logits",
                                 "kind/probabilities", "price/predictions"));
  ASSERT_NE(loaded->signature("price"), nullptr);
  torch::Tensor input = torch::rand({3, 2, 5});
  auto price = loaded->run(*loaded->signature("price"), input);
  auto all = loaded->run(*main, input);
  EXPECT_TRUE(torch::equal(price.at("predictions"), all.at("price/predictions")));
  EXPECT_EQ(price.at("predictions").sizes(), (std::vector<int64_t>{3, 1}));
}

// Each damage to a version folder is refused with the file it is in.
TEST(ExportedModel, ADamagedVersionIsRefusedNamingItsFile) {
  kiln::testing::TempDir dir;
  std::string good = export_model({saved_checkpoint(dir), "", "", ""}).directory;
  auto damaged = [&](const std::string& name) {
    std::string copy = dir.file(name);
    fs::copy(good, copy);
    return copy;
  };
  // Writes `text` to `file` of `version` and its MANIFEST line to match.
  auto rewrite = [](const std::string& version, const std::string& file, const std::string& text) {
    kiln::write_file_atomic(version + "/" + file, text);
    std::string manifest;
    for (const auto& entry : fs::directory_iterator(version)) {
      std::string name = entry.path().filename().string();
      if (name != "MANIFEST")
        manifest += io::manifest_line(name, io::read_file_bytes(entry.path()));
    }
    kiln::write_file_atomic(version + "/MANIFEST", manifest);
  };
  auto refused = [](const std::string& version, const std::string& file,
                    const std::string& problem) {
    try {
      ExportedModel::load(version, torch::kCPU);
      ADD_FAILURE() << "loaded " << version;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr(version + "/" + file));
      EXPECT_THAT(e.what(), HasSubstr(problem));
    }
  };
  std::string missing_yaml = damaged("no_yaml");
  fs::remove(missing_yaml + "/model.yaml");
  refused(missing_yaml, "model.yaml", "missing");

  std::string truncated = damaged("truncated");
  fs::resize_file(truncated + "/model.safetensors", 40);
  refused(truncated, "model.safetensors", "");

  std::string foreign = damaged("foreign");
  kiln::write_file_atomic(foreign + "/model.yaml", "format: saved_model\n");
  refused(foreign, "model.yaml", "not a kiln export");

  std::string numbered = damaged("numbered");
  kiln::write_file_atomic(numbered + "/model.yaml", "format: 3\n");
  refused(numbered, "model.yaml", "not a kiln export");

  // An edit the MANIFEST does not vouch for is refused before the file is read.
  std::string edited = damaged("edited");
  std::string yaml = read_text_file(edited + "/model.yaml");
  kiln::write_file_atomic(edited + "/model.yaml", yaml + "# edited\n");
  refused(edited, "model.yaml", "checksum or size differs from the MANIFEST: the version folder");
  kiln::write_file_atomic(edited + "/model.yaml", yaml);
  kiln::write_file_atomic(edited + "/notes.txt", "x");
  refused(edited, "notes.txt", "is not listed in the MANIFEST");

  // The rest are edits made with their MANIFEST rewritten to match, as a hand editor could: what
  // the file says is checked as well.
  std::string unknown = damaged("unknown_model");
  yaml = read_text_file(unknown + "/model.yaml");
  yaml.replace(yaml.find("type: sequential"), 16, "type: sequentia");
  rewrite(unknown, "model.yaml", yaml);
  refused(unknown, "model.yaml", "sequential");

  std::string newer = damaged("newer");
  std::string text = read_text_file(newer + "/model.yaml");
  text.replace(text.find("format_version: 2"), 17, "format_version: 9");
  rewrite(newer, "model.yaml", text);
  refused(newer, "model.yaml", "format_version 9");

  std::string wrong_output = damaged("wrong_output");
  text = read_text_file(wrong_output + "/model.yaml");
  size_t logits = text.find("- 3\n", text.find("logits:\n"));
  text.replace(logits, 3, "- 4");
  rewrite(wrong_output, "model.yaml", text);
  refused(wrong_output, "model.yaml", "is declared [-1, 4] but the model gives");

  // What model.yaml declares must agree with the model: each of these once loaded, then crashed
  // or failed every request.
  auto edited_yaml = [&](const std::string& name, const std::function<void(Json&)>& edit) {
    std::string version = damaged(name);
    Json tree = load_config_file(version + "/model.yaml");
    edit(tree);
    rewrite(version, "model.yaml", to_yaml(tree));
    return version;
  };
  Json::json_pointer main_outputs("/signatures/serving_default/outputs");
  refused(
      edited_yaml("string_logits", [&](Json& y) { y[main_outputs]["logits"]["dtype"] = "string"; }),
      "model.yaml", "serving_default.outputs.logits: op identity gives a number type, not string");
  refused(edited_yaml("float_classes",
                      [&](Json& y) { y[main_outputs]["classes"]["dtype"] = "float32"; }),
          "model.yaml", "op argmax_label gives string, not float32");
  refused(edited_yaml("wider_input",
                      [&](Json& y) {
                        y["signatures"]["serving_default"]["inputs"]["input"]["shape"] = {-1, 2, 6};
                      }),
          "model.yaml",
          "signature serving_default: input input is declared float32 [-1, 2, 6], but the model "
          "takes float32 [-1, 2, 5]");
  refused(edited_yaml("int_input",
                      [&](Json& y) {
                        y["signatures"]["serving_default"]["inputs"]["input"]["dtype"] = "int64";
                      }),
          "model.yaml", "is declared int64 [-1, 2, 5]");
  refused(edited_yaml("four_labels", [&](Json& y) { y["labels"].push_back("emu"); }), "model.yaml",
          "output classes picks from 3 classes, but `labels` names 4");
  // A layer edited a billion wide took 8 GB before its weights were compared with it.
  refused(
      edited_yaml("billion_wide", [&](Json& y) { y["model"]["layers"][1]["out"] = 1000000000; }),
      "model.yaml", "building the model it describes would take more than 256 MiB");
  // Weights of inf answered NaN to every request, with exit 0.
  std::string infinite = damaged("infinite_weights");
  engine::NamedTensors weights = engine::read_tensor_file(infinite + "/model.safetensors");
  weights.begin()->second.fill_(std::numeric_limits<float>::infinity());
  rewrite(infinite, "model.safetensors", engine::serialize_tensors(weights));
  refused(infinite, "model.safetensors", "values that are not finite (inf or NaN)");
  // Finite weights that overflow answered inf and NaN to every request.
  std::string huge = damaged("huge_weights");
  weights = engine::read_tensor_file(huge + "/model.safetensors");
  for (auto& [name, tensor] : weights) tensor.fill_(3e38);
  rewrite(huge, "model.safetensors", engine::serialize_tensors(weights));
  refused(huge, "model.yaml", "is not finite (inf or NaN) for an example of zeros");
  // Another dtype of the same size was read as the model's bits (F32 taken for I32).
  std::string retyped = damaged("retyped_weights");
  weights = engine::read_tensor_file(retyped + "/model.safetensors");
  weights.begin()->second = weights.begin()->second.to(torch::kInt32);
  rewrite(retyped, "model.safetensors", engine::serialize_tensors(weights));
  refused(retyped, "model.safetensors", "is Int, but the model's is Float");
  // A checkpoint of NaN weights is refused by export itself, not written as a version that
  // every load then refuses.
  std::string checkpoint = dir.file("nan_checkpoint");
  fs::copy(engine::find_checkpoint(dir.file("run"), "last"), checkpoint,
           fs::copy_options::recursive);
  weights = engine::read_tensor_file(checkpoint + "/model.safetensors");
  weights.begin()->second.fill_(std::numeric_limits<float>::quiet_NaN());
  rewrite(checkpoint, "model.safetensors", engine::serialize_tensors(weights));
  try {
    export_model({checkpoint, "", dir.file("nan_exports"), ""});
    FAIL() << "exported";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), checkpoint + "/model.safetensors");
    EXPECT_THAT(e.what(), HasSubstr("not finite"));
  }
  EXPECT_FALSE(fs::exists(dir.file("nan_exports")));
  refused(edited_yaml("other_layer",
                      [&](Json& y) {
                        y["signatures"]["embed"]["outputs"]["embedding"]["layer"] = "layers.99";
                      }),
          "model.yaml",
          "signature embed: output embedding gives the layer \"layers.99\", but this version "
          "gives the activations of embedding_layer \"\" only");
  refused(edited_yaml("repeated_label", [&](Json& y) { y["labels"][1] = y["labels"][0]; }),
          "model.yaml", "names the class");
  // The reader predict reads files with is read as predict will read it (a campaign's find: a
  // list of features given as a number was taken for none).
  refused(edited_yaml("reader_key", [&](Json& y) { y["reader"]["imagez"] = "x.gz"; }), "model.yaml",
          "reader.imagez");
  refused(edited_yaml("version_zero", [&](Json& y) { y["format_version"] = 0; }), "model.yaml",
          "format_version 0 is not one this kiln reads (1 to 2)");
  // A key kiln does not know is a misspelling whose meaning would be dropped in silence.
  refused(edited_yaml("misspelt_key", [&](Json& y) { y["lables"] = y["labels"]; }), "model.yaml",
          "\"lables\" is no key of model.yaml (did you mean \"labels\"?");
  refused(edited_yaml("input_key", [&](Json& y) { y["inputs"][0]["dtpye"] = "int64"; }),
          "model.yaml", "\"dtpye\" is no key of an input");
  refused(edited_yaml("source_key", [&](Json& y) { y["source"]["epoch"] = 3; }), "model.yaml",
          "\"epoch\" is no key of its `source`");
  refused(edited_yaml("signature_key",
                      [&](Json& y) { y["signatures"]["serving_default"]["method"] = "predict"; }),
          "model.yaml", "signatures: serving_default: \"method\" is no key of a signature");
  refused(edited_yaml("output_key",
                      [&](Json& y) { y[main_outputs]["logits"]["activation"] = "softmax"; }),
          "model.yaml", "\"activation\" is no key of an output");
  refused(edited_yaml("input_spec_key",
                      [&](Json& y) {
                        y["signatures"]["serving_default"]["inputs"]["input"]["op"] = "softmax";
                      }),
          "model.yaml", "\"op\" is no key of an input");
}

}  // namespace export_test
}  // namespace kiln::exports
