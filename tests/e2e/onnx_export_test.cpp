// End-to-end: `kiln export --format onnx` for the models people deploy (the CNN and MLP examples,
// ResNet-20, MobileNetV2, a self-attention model) and the rest of the zoo, each checked by tools
// that share no code with kiln (tests/onnx/check_onnx.py): the onnx package's checker and strict
// shape inference, then onnxruntime and OpenCV's DNN module run the model on the same examples as
// `kiln predict`, whose outputs they must match within 1e-4 (OpenCV 4.6 where its importer reads
// the model's operators, docs/onnx.md). A model with an operator kiln cannot write is refused,
// naming the layer. Skipped, saying so, where python3-onnx, python3-opencv or onnxruntime-node
// (scripts/install-deps.sh) is missing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "kiln/core/json.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string example_config(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/configs/examples/fashion_mnist/" + name;
}

// A sequential model over each image read as 28 steps of 28 features.
std::string sequence_model(const std::string& layers) {
  return "model={type: sequential, layers: [{type: reshape, shape: [28, 28]}, " + layers +
         ", {type: linear, out: 10}]}";
}

class OnnxExport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::run_command("/usr/bin/python3 -c 'import onnx, cv2' 2>&1").exit_code != 0)
      GTEST_SKIP() << "python3-onnx or python3-opencv is missing (scripts/install-deps.sh)";
    if (!fs::exists(std::string(KILN_SOURCE_DIR) + "/tests/onnx/node_modules/onnxruntime-node"))
      GTEST_SKIP() << "onnxruntime-node is missing from tests/onnx (scripts/install-deps.sh)";
  }

  // Trains `config` for two steps (with the `--set`s of `sets`) and exports it as ONNX (with
  // `export_flags`); returns the version folder, or "" with the export's error in `error`.
  std::string train_and_export(const std::string& config, const std::vector<std::string>& sets,
                               std::string* error = nullptr, const std::string& export_flags = "") {
    std::string args = "train " + config + " --quiet --runs-root " + dir_.file("runs") +
                       " --set 'train.max=2 steps' --set 'train.validate_every=2 steps'"
                       " --set runtime.threads=2";
    // Fashion-MNIST read in part: two steps need no more.
    if (config.find("/fashion_mnist/") != std::string::npos) args += " --set data.train.limit=256";
    for (const auto& set : sets) args += " --set '" + set + "'";
    testing::CommandResult trained = testing::run_command(kiln(args));
    EXPECT_EQ(trained.exit_code, 0) << trained.err;
    std::string run = trained.out.substr(trained.out.find("run: ") + 5);
    run = run.substr(0, run.find('\n'));
    testing::CommandResult exported = testing::run_command(
        kiln("export " + run + " --format onnx " + export_flags + " --to " + dir_.file("exports")));
    if (error) *error = exported.err;
    if (exported.exit_code != 0) return "";
    std::string line = exported.out;
    return line.substr(line.rfind(": ") + 2, line.find_last_not_of('\n') - line.rfind(": ") - 1);
  }

  // Four examples of the Fashion-MNIST shape, as `kiln predict --input` reads them.
  std::string examples() {
    std::mt19937 random(7);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::string lines;
    for (int e = 0; e < 4; ++e) {
      Json image = Json::array();
      Json rows = Json::array();
      for (int y = 0; y < 28; ++y) {
        Json row = Json::array();
        for (int x = 0; x < 28; ++x) row.push_back(pixel(random));
        rows.push_back(row);
      }
      image.push_back(rows);
      lines += image.dump() + "\n";
    }
    return dir_.write("examples.jsonl", lines);
  }

  // check_onnx.py's report on the version's model.onnx against `kiln predict`.
  Json check(const std::string& version) {
    std::string input = examples();
    std::string expected = dir_.file("expected.jsonl");
    testing::CommandResult predicted = testing::run_command(
        kiln("predict " + version + " --input " + input + " --no-optimize --output " + expected));
    EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
    testing::CommandResult checked = testing::run_command(
        "/usr/bin/python3 " + std::string(KILN_SOURCE_DIR) + "/tests/onnx/check_onnx.py " +
        version + "/model.onnx " + input + " " + expected + " 2>/dev/null");
    EXPECT_EQ(checked.exit_code, 0) << checked.out;
    return Json::parse(checked.out);
  }

  // check_onnx.py's report for the version's model.onnx on random instances of its input shape
  // (written by check_onnx.py --random-inputs), against `kiln predict` of the same instances.
  Json check_on_random_inputs(const std::string& version) {
    std::string script =
        "/usr/bin/python3 " + std::string(KILN_SOURCE_DIR) + "/tests/onnx/check_onnx.py ";
    std::string input = dir_.file("random.jsonl"), expected = dir_.file("random_expected.jsonl");
    testing::CommandResult written =
        testing::run_command(script + "--random-inputs " + version + "/model.onnx " + input);
    EXPECT_EQ(written.exit_code, 0) << written.out << written.err;
    testing::CommandResult predicted = testing::run_command(
        kiln("predict " + version + " --input " + input + " --no-optimize --output " + expected));
    EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
    testing::CommandResult checked = testing::run_command(script + version + "/model.onnx " +
                                                          input + " " + expected + " 2>/dev/null");
    EXPECT_EQ(checked.exit_code, 0) << checked.out;
    return Json::parse(checked.out);
  }

  // Every output of onnxruntime's within 1e-4 of kiln's, and the same class ids; OpenCV's too
  // when `opencv`.
  static void expect_every_output_close(const Json& report, bool opencv) {
    ASSERT_TRUE(report.contains("max_abs_difference")) << report.dump();
    EXPECT_EQ(report.value("examples", 0), 4);
    expect_close(report["max_abs_difference"]);
    if (!opencv) return;
    ASSERT_TRUE(report["opencv"].contains("max_abs_difference")) << report.dump();
    expect_close(report["opencv"]["max_abs_difference"]);
  }

  static void expect_close(const Json& differences) {
    EXPECT_FALSE(differences.empty());
    for (const auto& [name, difference] : differences.items()) {
      if (name.find("class_ids") != std::string::npos)
        EXPECT_EQ(difference, 0) << name;
      else
        EXPECT_LT(difference.get<double>(), 1e-4) << name;
    }
  }

  void expect_same_as_kiln(const Json& report) {
    EXPECT_EQ(report.value("checker", ""), "ok") << report.dump();
    EXPECT_EQ(report.value("shape_inference", ""), "ok");
    EXPECT_EQ(report.value("opset", 0), 13);
    EXPECT_TRUE(report.value("dynamic_batch", false)) << "the batch is a named dimension";
    EXPECT_EQ(report["outputs"], Json::array({"class_ids", "logits", "probabilities"}));
    expect_every_output_close(report, /*opencv=*/true);
    EXPECT_EQ(report["max_abs_difference"].size(), 3u) << "logits, probabilities, class ids";
  }

  testing::TempDir dir_;
};

TEST_F(OnnxExport, TheCnnExampleWithItsNormalisationInsideTheGraph) {
  std::string version = train_and_export(example_config("cnn.yaml"), {});
  ASSERT_FALSE(version.empty());
  EXPECT_TRUE(fs::exists(version + "/model.onnx"));
  EXPECT_THAT(testing::read_file(version + "/MANIFEST"), HasSubstr(" model.onnx\n"));
  expect_same_as_kiln(check(version));
}

TEST_F(OnnxExport, TheMlpExample) {
  std::string version = train_and_export(example_config("mlp.yaml"), {});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

TEST_F(OnnxExport, ResNet20) {
  std::string version =
      train_and_export(example_config("resnet.yaml"), {"scheduler.warmup=1 steps"});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

TEST_F(OnnxExport, MobileNetV2) {
  std::string version = train_and_export(
      example_config("mlp.yaml"), {"model={type: mobilenet_v2, width: 0.25, small_input: true}"});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

TEST_F(OnnxExport, ASelfAttentionModel) {
  std::string version = train_and_export(
      example_config("mlp.yaml"),
      {sequence_model("{type: multihead_attention, heads: 4}, {type: global_avgpool}")});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

// An operator kiln has no ONNX form for: the export fails naming the layer it belongs to, or
// the eval transforms, and its operator; no version is left behind.
TEST_F(OnnxExport, AnOperatorWithNoOnnxFormIsNamed) {
  std::string error;
  std::string version = train_and_export(
      example_config("mlp.yaml"),
      {"model={type: sequential, layers: [{type: conv2d, out: 4, kernel: 3}, global_avgpool, "
       "{type: linear, out: 10}]}",
       "data.transforms.eval=[{type: resize, size: 32, mode: bicubic}]"},
      &error);
  EXPECT_EQ(version, "");
  EXPECT_THAT(error, HasSubstr("cannot export to ONNX: outside the model's layers (its eval "
                               "transforms or outputs) (aten::upsample_bicubic2d): kiln has no "
                               "ONNX form for this operator"));
  EXPECT_FALSE(fs::exists(dir_.file("exports/fashion_mlp/1")));
}

// The layers of the zoo beyond the examples above, each checked the same way.
TEST_F(OnnxExport, ConvolutionNormalisationAndResizingLayers) {
  std::string version = train_and_export(
      example_config("mlp.yaml"),
      {"model={type: sequential, layers: [{type: upsample, scale: 2, mode: linear}, "
       "{type: conv2d, out: 8, kernel: 3, stride: 2, padding: 1}, {type: groupnorm, groups: 2}, "
       "silu, {type: residual, body: [{type: conv2d, out: 8, kernel: 3, padding: same}, "
       "batchnorm]}, {type: depthwise_separable_conv2d, out: 8, kernel: 3}, "
       "{type: conv_transpose2d, out: 4, kernel: 3, stride: 2}, {type: upsample, scale: 2}, "
       "gelu, {type: maxpool, kernel: 2}, {type: avgpool, kernel: 2}, global_avgpool, "
       "{type: linear, out: 16}, elu, {type: linear, out: 10}]}"});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

// Branches and named blocks: a graph's nodes merged by concat and add, a block used twice.
TEST_F(OnnxExport, GraphBranchesAndNamedBlocks) {
  std::string version = train_and_export(
      example_config("mlp.yaml"),
      {"model={type: sequential, blocks: {cbr: [{type: conv2d, out: 4, kernel: 3, padding: same}, "
       "batchnorm, relu]}, layers: [{type: block, name: cbr, repeat: 2}, {type: graph, nodes: ["
       "{name: wide, layers: [{type: conv2d, out: 4, kernel: 5, padding: same}]}, "
       "{name: narrow, inputs: [input], layers: [{type: conv2d, out: 4, kernel: 1}]}, "
       "{name: joined, inputs: [wide, narrow], merge: concat, layers: [relu]}, "
       "{name: summed, inputs: [wide, narrow], merge: add}, "
       "{name: out, inputs: [joined, summed], merge: concat}]}, global_avgpool, "
       "{type: linear, out: 10}]}"});
  ASSERT_FALSE(version.empty());
  expect_same_as_kiln(check(version));
}

// A recurrent model: ONNX's LSTM operator, which OpenCV 4.6 reads for a batch of one only, and
// with --portable its steps written out, which OpenCV runs for any batch.
TEST_F(OnnxExport, APortableExportRunsTheLstmStepByStepWhereOpenCvCannotReadTheOperator) {
  std::vector<std::string> lstm = {sequence_model("{type: lstm, hidden: 8}")};
  Json native = check_on_random_inputs(train_and_export(example_config("mlp.yaml"), lstm));
  expect_every_output_close(native, /*opencv=*/false);
  EXPECT_TRUE(native["opencv"].contains("error")) << native.dump();

  std::string error;
  std::string portable = train_and_export(example_config("mlp.yaml"), lstm, &error, "--portable");
  ASSERT_FALSE(portable.empty()) << error;
  Json report = check_on_random_inputs(portable);
  EXPECT_EQ(report.value("checker", ""), "ok") << report.dump();
  expect_every_output_close(report, /*opencv=*/true);
  std::string graph = testing::read_file(portable + "/model.onnx");
  EXPECT_EQ(graph.find("LSTM"), std::string::npos) << "no LSTM operator in a portable graph";
}

// The rest of the zoo: each network exports to ONNX that the checker and strict shape inference
// accept and onnxruntime runs as kiln does, and that OpenCV 4.6 runs too: as exported, or with
// --portable (recurrent layers step by step, integers as floats, embeddings as one-hot
// products), which the recurrent and tabular models with embeddings need (docs/onnx.md).
TEST_F(OnnxExport, EveryOtherZooNetworkExportsValidOnnx) {
  std::string fashion = example_config("mlp.yaml");
  std::string synthetic = std::string(KILN_SOURCE_DIR) + "/configs/examples/synthetic/";
  std::string signal = synthetic + "signal_autoencoder.yaml";
  std::string frequencies = synthetic + "multi_label_frequencies.yaml";  // [1, 64], 8 labels
  std::string penguin = std::string(KILN_SOURCE_DIR) + "/configs/examples/penguin/penguin.yaml";
  // Its records by a path that holds wherever the test runs (the config's is the repository's).
  std::string penguin_records = "data.train.files=" + std::string(KILN_SOURCE_DIR) +
                                "/configs/examples/penguin/tfx_penguin_train.tfrecord.gz";
  // `opencv`: OpenCV 4.6 runs it too; `portable`: exported with --portable.
  struct Case {
    std::string name, config;
    std::vector<std::string> sets;
    bool opencv = false;
    bool portable = false;
  };
  const std::string quick_signal = "scheduler.warmup=1 steps";
  // The shapes example's CSV files, made by its script.
  testing::CommandResult made = testing::run_command("cd " + dir_.path() + " && /usr/bin/python3 " +
                                                     std::string(KILN_SOURCE_DIR) +
                                                     "/configs/examples/shapes/make_shapes.py");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string shapes = dir_.file("data/shapes");
  std::string shapes_wide_deep =
      std::string(KILN_SOURCE_DIR) + "/configs/examples/shapes/shapes_wide_deep.yaml";
  std::vector<Case> cases = {
      {"lenet5", fashion, {"model={type: lenet5}"}, true},
      {"lenet5", fashion, {"model={type: lenet5}"}, true, true},
      {"tfdoc_cnn", fashion, {"model={type: tfdoc_cnn, channels: [4, 8], dense: 16}"}, true},
      {"wide_resnet", fashion, {"model={type: wide_resnet, depth: 10, widen: 1}"}, true},
      {"multi_head", example_config("multi_head.yaml"), {}, true},
      // VGG halves its input five times: the images are resized to 32x32, in the graph too.
      {"vgg",
       fashion,
       {"model={type: vgg, depth: 11, hidden: 16, pool: 1}",
        "data.transforms.train=[{type: resize, size: 32}]",
        "data.transforms.eval=[{type: resize, size: 32}]"},
       true},
      {"transformer_encoder",
       fashion,
       {sequence_model("{type: transformer_encoder, heads: 4, ff: 32}, flatten")},
       true},
      {"dnn", penguin, {penguin_records, "model={type: dnn, num_classes: 3, hidden: [8]}"}, true},
      {"linear", penguin, {penguin_records, "model={type: linear, num_classes: 3}"}, true},
      {"autoencoder", signal, {quick_signal}, true},
      {"multi_label", frequencies, {}, true},
      {"multi_label", frequencies, {}, true, true},
      {"tcn", frequencies, {"model={type: tcn, num_classes: 8, channels: [8, 8]}"}, true},
      {"gru", fashion, {sequence_model("{type: gru, hidden: 8, layers: 2, bidirectional: true}")}},
      {"gru",
       fashion,
       {sequence_model("{type: gru, hidden: 8, layers: 2, bidirectional: true}")},
       true,
       true},
      {"rnn_classifier", frequencies, {"model={type: rnn_classifier, num_classes: 8, hidden: 8}"}},
      {"rnn_classifier",
       frequencies,
       {"model={type: rnn_classifier, num_classes: 8, hidden: 8}"},
       true,
       true},
      {"embedding (indices computed in the graph)",
       fashion,
       {"model={type: sequential, layers: [flatten, {type: linear, out: 4}, relu, "
        "{type: embedding, entries: 10, dim: 3}, flatten, {type: linear, out: 10}]}"}},
      {"embedding (indices computed in the graph)",
       fashion,
       {"model={type: sequential, layers: [flatten, {type: linear, out: 4}, relu, "
        "{type: embedding, entries: 10, dim: 3}, flatten, {type: linear, out: 10}]}"},
       true,
       true},
      {"wide_deep (tabular: crossed, bucketized and embedded columns)",
       shapes_wide_deep,
       {"data.train.file=" + shapes + "/train.csv", "data.test.file=" + shapes + "/test.csv"}},
      {"wide_deep (tabular: crossed, bucketized and embedded columns)",
       shapes_wide_deep,
       {"data.train.file=" + shapes + "/train.csv", "data.test.file=" + shapes + "/test.csv"},
       true,
       true},
      {"penguin (tabular)", penguin, {penguin_records}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name + (c.portable ? " --portable" : ""));
    std::string error;
    std::string version =
        train_and_export(c.config, c.sets, &error, c.portable ? "--portable" : "");
    ASSERT_FALSE(version.empty()) << error;
    Json report = check_on_random_inputs(version);
    EXPECT_EQ(report.value("checker", ""), "ok") << report.dump();
    EXPECT_EQ(report.value("shape_inference", ""), "ok");
    EXPECT_TRUE(report.value("dynamic_batch", false));
    expect_every_output_close(report, c.opencv);
  }
}

}  // namespace
}  // namespace kiln
