// End-to-end: `kiln train` writes TensorBoard event files under RUN/tensorboard/, read back by
// the tests' own decoder (tests/support/event_file_reader.h): every value of metrics.csv as a
// scalar at its step in its split's directory, histograms of parameters and gradients, the
// config and notes as text, and the run's hyper-parameters for the HParams tab. The config's
// `tensorboard:` section switches the parts; a wrong value is a config error naming it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "kiln/io/image_codec.h"
#include "tests/support/binary_task.h"
#include "tests/support/event_file_reader.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensorboard_view.h"

namespace kiln {
namespace {

using ::testing::Contains;
using testing::DecodedEvent;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// 16 steps per epoch; histograms at steps 16 and 32.
constexpr const char* kConfig = R"(
version: 1
name: board
seed: 3
data:
  train: {type: fashion_mnist, split: train, limit: 512}
  val: {type: fashion_mnist, split: test, limit: 128}
  batch_size: 32
model:
  type: sequential
  layers: [flatten, {type: linear, out: 16}, relu, {type: linear, out: 10}]
optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
train: {max: 2 epochs, validate_every: 1 epoch, log_every: 8 steps}
runtime: {threads: 1}
)";

struct CsvRow {
  int64_t step;
  std::string split, metric;
  double value;
};

std::vector<CsvRow> metrics_csv(const std::string& run) {
  std::istringstream in(testing::read_file(run + "/metrics.csv"));
  std::string line;
  std::getline(in, line);  // header
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    rows.push_back({std::stoll(cells.at(0)), cells.at(2), cells.at(3), std::stod(cells.at(4))});
  }
  return rows;
}

// Every event of every file of `directory`, in the order TensorBoard reads them.
std::vector<DecodedEvent> all_events(const std::string& directory) {
  std::vector<DecodedEvent> events;
  for (const std::string& file : testing::event_files_in(directory))
    for (DecodedEvent& event : testing::read_event_file(file)) events.push_back(std::move(event));
  return events;
}

// The values of plugin `plugin` in `directory`, by tag.
std::map<std::string, std::vector<std::pair<int64_t, testing::DecodedValue>>> values_of(
    const std::string& directory, const std::string& plugin) {
  std::map<std::string, std::vector<std::pair<int64_t, testing::DecodedValue>>> out;
  for (const DecodedEvent& event : all_events(directory))
    for (const testing::DecodedValue& value : event.values)
      if (value.plugin == plugin) out[value.tag].emplace_back(event.step, value);
  return out;
}

class TensorBoardFiles : public ::testing::Test {
 protected:
  testing::CommandResult train(const std::string& extra = "") {
    return testing::run_command(std::string(KILN_BINARY) + " train " +
                                dir_.write("board.yaml", kConfig) + " --runs-root " +
                                dir_.file("runs") + " " + extra);
  }
  std::string trained(const std::string& extra = "") {
    testing::CommandResult result = train(extra);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return testing::run_dir_of(result.out);
  }
  testing::TempDir dir_;
};

TEST_F(TensorBoardFiles, EveryValueOfMetricsCsvIsAScalarAtItsStepInItsSplitsDirectory) {
  std::string run = trained();
  std::vector<CsvRow> rows = metrics_csv(run);
  ASSERT_GT(rows.size(), 10u);
  std::map<std::string, testing::ScalarSeries> shown;
  size_t points = 0;
  for (const char* split : {"train", "val"}) {
    shown[split] = testing::tensorboard_scalars(run + "/tensorboard/" + split);
    for (const auto& [tag, series] : shown[split]) points += series.size();
  }
  EXPECT_EQ(points, rows.size()) << "one point per row, no more";
  for (const CsvRow& row : rows) {
    SCOPED_TRACE(row.split + "/" + row.metric + " at step " + std::to_string(row.step));
    // A tag of no split (system/peak_rss_mb) is in train/, whole.
    bool split = row.split == "train" || row.split == "val";
    const auto& series =
        shown[split ? row.split : "train"][split ? row.metric : row.split + "/" + row.metric];
    auto point = std::find_if(series.begin(), series.end(),
                              [&](const auto& p) { return p.first == row.step; });
    ASSERT_NE(point, series.end());
    // Stored as float32, as TensorFlow stores scalars; metrics.csv has the double in 9 digits.
    EXPECT_NEAR(point->second, row.value, 1e-6 * std::max(1.0, std::abs(row.value)));
  }
  // Training and validation loss under one name, in two directories: one chart in TensorBoard.
  EXPECT_EQ(shown["train"].count("loss"), 1u);
  EXPECT_EQ(shown["val"].count("loss"), 1u);
  EXPECT_EQ(shown["val"].count("accuracy"), 1u);
  EXPECT_EQ(shown["train"].count("time/forward"), 1u);
  EXPECT_EQ(shown["train"].count("system/peak_rss_mb"), 1u);
}

TEST_F(TensorBoardFiles, HistogramsOfEveryParameterAndItsGradientOncePerEpoch) {
  std::string run = trained();
  auto histograms = values_of(run + "/tensorboard/train", "histograms");
  for (const char* name : {"layers.1.weight", "layers.1.bias", "layers.3.weight", "layers.3.bias"})
    for (const std::string kind : {"weights/", "gradients/"}) {
      SCOPED_TRACE(kind + name);
      ASSERT_EQ(histograms[kind + name].size(), 2u);
      EXPECT_EQ(histograms[kind + name][0].first, 16);
      EXPECT_EQ(histograms[kind + name][1].first, 32);
    }
  const testing::DecodedHistogram& weights =
      *histograms["weights/layers.1.weight"][1].second.histogram;
  EXPECT_EQ(weights.num, 784 * 16);
  double counted = 0;
  for (double count : weights.buckets) counted += count;
  EXPECT_EQ(counted, 784 * 16);
  EXPECT_LT(weights.min, 0);
  EXPECT_GT(weights.max, 0);
  const testing::DecodedHistogram& gradients =
      *histograms["gradients/layers.3.bias"][0].second.histogram;
  EXPECT_EQ(gradients.num, 10);
  EXPECT_GT(gradients.sum_squares, 0) << "the gradients of the step, not cleared ones";
}

// A run shorter than histograms_every wrote no histogram at all: it writes them when it ends.
TEST_F(TensorBoardFiles, ARunShorterThanTheHistogramPeriodWritesThemWhenItEnds) {
  std::string run = trained("--set tensorboard.histograms_every='100 epochs'");
  auto histograms = values_of(run + "/tensorboard/train", "histograms");
  ASSERT_EQ(histograms["weights/layers.1.weight"].size(), 1u);
  EXPECT_EQ(histograms["weights/layers.1.weight"][0].first, 32);
  ASSERT_EQ(histograms["gradients/layers.3.bias"].size(), 1u);
}

// At each validation (steps 16 and 32): 16 inputs of 28x28 pixels, enlarged twice, framed and
// captioned in a 4x4 grid; and the confusion matrix of the 10 classes, counting every example.
TEST_F(TensorBoardFiles, ValidationImagesShowSamplesAndTheConfusionMatrix) {
  std::string run = trained();
  auto images = values_of(run + "/tensorboard/val", "images");
  ASSERT_EQ(images["samples"].size(), 2u);
  ASSERT_EQ(images["confusion_matrix"].size(), 2u);
  EXPECT_EQ(images["samples"][1].first, 32);
  const testing::DecodedImage& samples = *images["samples"][1].second.image;
  EXPECT_EQ(samples.width, 4 * 64 + 4);
  EXPECT_EQ(samples.height, 4 * 78 + 4);
  EXPECT_EQ(samples.colorspace, 3);
  io::Image decoded = io::decode_image(samples.encoded, 0, "samples");
  EXPECT_EQ(decoded.width, samples.width);
  EXPECT_EQ(decoded.height, samples.height);
  // Below the axis titles and column numbers (36 px); right of the rows' class names, the
  // widest "T-SHIRT/TOP 0" (13 characters of 8 px less 2, then 10).
  const testing::DecodedImage& confusion = *images["confusion_matrix"][0].second.image;
  EXPECT_EQ(confusion.height, 36 + 10 * 32) << "10 classes, counts below 1000";
  EXPECT_EQ(confusion.width, 13 * 8 - 2 + 10 + 10 * 32);
  // The examples validation got wrong (after an epoch of 512 examples, more than 16 of 128),
  // captioned with their class names.
  ASSERT_EQ(images["misclassified"].size(), 2u);
  const testing::DecodedImage& wrong = *images["misclassified"][0].second.image;
  EXPECT_EQ(wrong.width, 4 * 64 + 4);
  EXPECT_EQ(wrong.height, 4 * 78 + 4);
}

// At each validation, a precision-recall curve per class, tagged with the class's name, in the
// pr_curves plugin's form: 127 thresholds; at the lowest every one of the 128 validation
// examples counts, as a positive of its own class's curve and a negative of the others'.
TEST_F(TensorBoardFiles, ValidationWritesAPrecisionRecallCurvePerClass) {
  std::string run = trained();
  auto curves = values_of(run + "/tensorboard/val", "pr_curves");
  ASSERT_EQ(curves.size(), 10u);
  ASSERT_EQ(curves.count("pr_curve/Trouser"), 1u);
  ASSERT_EQ(curves["pr_curve/Trouser"].size(), 2u);
  EXPECT_EQ(curves["pr_curve/Trouser"][1].first, 32);
  double positives = 0;
  for (const auto& [tag, points] : curves) {
    SCOPED_TRACE(tag);
    const testing::DecodedValue& value = points.back().second;
    EXPECT_EQ(testing::decode_pr_curve_plugin(value.plugin_content).num_thresholds, 127);
    ASSERT_TRUE(value.tensor.has_value());
    ASSERT_EQ(value.tensor->shape, (std::vector<int64_t>{6, 127}));
    std::vector<float> rows = testing::tensor_floats(*value.tensor);
    EXPECT_EQ(rows[0] + rows[127], 128) << "true and false positives at threshold 0";
    EXPECT_EQ(rows[2 * 127], 0) << "no true negative at threshold 0";
    for (int i = 1; i < 127; ++i) {
      EXPECT_LE(rows[i], rows[i - 1]) << "true positives only fall as the threshold rises";
      EXPECT_EQ(rows[i] + rows[3 * 127 + i], rows[0]) << "tp + fn: the class's examples";
    }
    positives += rows[0];
  }
  EXPECT_EQ(positives, 128);
}

// A binary_cross_entropy head (one logit, a float 0/1 target): one curve, `pr_curve`, of the
// sigmoid of its output, every validation row a positive or a negative.
TEST_F(TensorBoardFiles, ASigmoidHeadGetsOneCurve) {
  std::string rows = testing::binary_rows(200);
  int64_t positives = 0;  // rows labelled 1
  std::istringstream lines(rows);
  for (std::string line; std::getline(lines, line);)
    positives += line.size() > 2 && line.compare(line.size() - 2, 2, ",1") == 0;
  std::string data = dir_.write("rows.csv", rows);
  std::string config = dir_.write("sigmoid.yaml",
                                  "version: 1\nname: sigmoid\nseed: 1\n"
                                  "data:\n  train: {type: csv, file: " +
                                      data +
                                      ", target: label, target_type: float}\n"
                                      "  val: {type: csv, file: " +
                                      data +
                                      ", target: label, target_type: float}\n"
                                      "  batch_size: 20\n"
                                      "model: {type: mlp, num_classes: 1, hidden: [8]}\n"
                                      "loss: binary_cross_entropy\nmetrics: []\n"
                                      "optimizer: {type: sgd, lr: 0.1}\n"
                                      "train: {max: 20 steps, validate_every: 10 steps}\n");
  testing::CommandResult result = testing::run_command(
      std::string(KILN_BINARY) + " train " + config + " --runs-root " + dir_.file("runs"));
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  auto curves = values_of(testing::run_dir_of(result.out) + "/tensorboard/val", "pr_curves");
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves["pr_curve"].size(), 2u);
  std::vector<float> values = testing::tensor_floats(*curves["pr_curve"][1].second.tensor);
  ASSERT_EQ(values.size(), 6u * 127);
  EXPECT_EQ(values[0], positives) << "true positives at threshold 0: every positive row";
  EXPECT_EQ(values[127], 200 - positives) << "false positives at threshold 0";
  EXPECT_GT(positives, 0);
}

// The model's graph for TensorBoard's Graphs tab, once, in train/: the config's layers in order,
// each taking the one before and its own parameters, with their output shapes.
TEST_F(TensorBoardFiles, TheGraphTabShowsTheModelsLayers) {
  std::string run = trained();
  std::vector<std::string> graphs;
  for (const DecodedEvent& event : all_events(run + "/tensorboard/train"))
    if (!event.graph_def.empty()) graphs.push_back(event.graph_def);
  ASSERT_EQ(graphs.size(), 1u);
  testing::DecodedGraph graph = testing::decode_graph_def(graphs[0]);
  std::vector<std::string> ops;
  std::map<std::string, testing::DecodedNode> nodes;
  for (const testing::DecodedNode& node : graph.nodes) {
    ops.push_back(node.op);
    nodes[node.name] = node;
  }
  EXPECT_THAT(ops,
              ::testing::ElementsAre("Placeholder", "Flatten", "Variable", "Variable", "Linear",
                                     "ReLU", "Variable", "Variable", "Linear", "Identity"));
  EXPECT_EQ(nodes["input"].attrs["shape"].shape, (std::vector<int64_t>{-1, 1, 28, 28}));
  EXPECT_THAT(nodes["layers/1/Linear"].inputs,
              ::testing::ElementsAre("layers/0/Flatten", "layers/1/weight", "layers/1/bias"));
  EXPECT_THAT(nodes["layers/1/Linear"].attrs["_output_shapes"].list_shapes,
              ::testing::ElementsAre(std::vector<int64_t>{-1, 16}));
  EXPECT_EQ(nodes["layers/1/weight"].attrs["shape"].shape, (std::vector<int64_t>{16, 784}));
  EXPECT_THAT(nodes["layers/2/ReLU"].inputs, ::testing::ElementsAre("layers/1/Linear"));
  EXPECT_THAT(graph.nodes.back().inputs, ::testing::ElementsAre("layers/3/Linear"));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// After the last validation: the 128 validation examples' 16 activations entering the last
// layer, their classes, a sprite of the 28x28 inputs in rows of 12, and the config naming them.
TEST_F(TensorBoardFiles, TheProjectorShowsTheLastLayersInputForValidationExamples) {
  std::string val = trained() + "/tensorboard/val/";
  std::vector<std::string> rows = lines_of(testing::read_file(val + "tensors.tsv"));
  ASSERT_EQ(rows.size(), 128u);
  for (const std::string& row : rows)
    ASSERT_EQ(std::count(row.begin(), row.end(), '\t'), 15) << row;
  std::vector<std::string> labels = lines_of(testing::read_file(val + "metadata.tsv"));
  ASSERT_EQ(labels.size(), 128u);
  for (const std::string& label : labels) EXPECT_THAT(label, ::testing::MatchesRegex("[0-9]"));
  io::Image sprite = io::decode_image(testing::read_file(val + "sprite.png"), 0, "sprite.png");
  EXPECT_EQ(sprite.width, 12 * 28);
  EXPECT_EQ(sprite.height, 11 * 28);
  std::string config = testing::read_file(val + "projector_config.pbtxt");
  for (const char* line : {"tensor_path: \"tensors.tsv\"", "metadata_path: \"metadata.tsv\"",
                           "image_path: \"sprite.png\"", "single_image_dim: 28",
                           "tensor_shape: 128", "tensor_shape: 16"})
    EXPECT_THAT(config, HasSubstr(line));
}

TEST_F(TensorBoardFiles, TheProjectorTakesANamedLayerAndRefusesAnUnknownOne) {
  std::string val = trained(
                        "--set tensorboard.projector.layer=layers.1 --set "
                        "tensorboard.projector.max_examples=50") +
                    "/tensorboard/val/";
  std::vector<std::string> rows = lines_of(testing::read_file(val + "tensors.tsv"));
  ASSERT_EQ(rows.size(), 50u);
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), '\t'), 15) << "linear 784 -> 16";
  testing::CommandResult wrong = train("--set tensorboard.projector.layer=layers.9");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("tensorboard.projector.layer"));
  EXPECT_THAT(wrong.err, HasSubstr("the model has no layer \"layers.9\""));
}

// A classifying head and a reconstructing one: one grid of inputs beside their reconstructions,
// labelled by the classifier (28x28 pairs: cells 2 x 56 + 4 wide); the classifier's confusion
// matrix only; the projector's default layer is the classifier's last (its 12 inputs).
constexpr const char* kHeadsConfig = R"(
version: 1
name: heads
seed: 3
data:
  train: {type: fashion_mnist, split: train, limit: 256}
  val: {type: fashion_mnist, split: test, limit: 64}
  batch_size: 32
model:
  type: multi_head
  backbone: [{type: conv2d, out: 4, kernel: 3, padding: same}, relu]
  heads:
    - name: class
      layers: [flatten, {type: linear, out: 12}, relu, {type: linear, out: 10}]
      loss: cross_entropy
      metrics: [accuracy]
    - name: reconstruction
      layers: [{type: conv2d, out: 1, kernel: 3, padding: same}]
      loss: mse
      target: input
optimizer: {type: adam, lr: 0.001}
train: {max: 1 epoch, validate_every: 1 epoch, monitor: val/class/accuracy, mode: max}
runtime: {threads: 1}
)";

TEST_F(TensorBoardFiles, AModelOfSeveralHeadsGetsImagesAndTheProjectorOfItsHeads) {
  testing::CommandResult result = testing::run_command(std::string(KILN_BINARY) + " train " +
                                                       dir_.write("heads.yaml", kHeadsConfig) +
                                                       " --runs-root " + dir_.file("runs"));
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  std::string run = testing::run_dir_of(result.out);
  auto images = values_of(run + "/tensorboard/val", "images");
  ASSERT_EQ(images["samples"].size(), 1u);
  EXPECT_EQ(images["samples"][0].first, 8);
  const testing::DecodedImage& samples = *images["samples"][0].second.image;
  EXPECT_EQ(samples.width, 4 * (2 * 56 + 4 + 2 * 2 + 4) + 4);
  EXPECT_EQ(samples.height, 4 * 78 + 4) << "captioned: the class head's labels";
  ASSERT_EQ(images["class/confusion_matrix"].size(), 1u);
  // The head's classes are numbered: the rows' labels are no wider than the title "TRUE".
  EXPECT_EQ(images["class/confusion_matrix"][0].second.image->width, 4 * 8 - 2 + 10 + 10 * 32);
  EXPECT_EQ(images["misclassified"].size(), 1u);
  EXPECT_EQ(images.size(), 3u) << "no confusion matrix for the reconstruction";

  std::string val = run + "/tensorboard/val/";
  std::vector<std::string> rows = lines_of(testing::read_file(val + "tensors.tsv"));
  ASSERT_EQ(rows.size(), 64u);
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), '\t'), 11) << rows[0];
  EXPECT_EQ(lines_of(testing::read_file(val + "metadata.tsv")).size(), 64u);
}

TEST_F(TensorBoardFiles, TheConfigAndNotesAreTextAndTheHyperParametersAreForTheHParamsTab) {
  std::string run = trained("--note 'a *first* try' --set optimizer.lr=0.02");
  auto texts = values_of(run + "/tensorboard", "text");
  ASSERT_EQ(texts["config"].size(), 1u);
  EXPECT_EQ(texts["config"][0].first, 0);
  EXPECT_THAT(texts["config"][0].second.tensor->strings.at(0), HasSubstr("    name: board\n"));
  ASSERT_EQ(texts["notes"].size(), 1u);
  EXPECT_EQ(texts["notes"][0].second.tensor->strings.at(0), "a *first* try");

  auto hparams = values_of(run + "/tensorboard", "hparams");
  ASSERT_EQ(hparams.size(), 3u);
  testing::DecodedHParams experiment =
      testing::decode_hparams(hparams["_hparams_/experiment"].at(0).second.plugin_content);
  EXPECT_THAT(experiment.hparam_names, Contains("optimizer.lr"));
  EXPECT_THAT(experiment.hparam_names, Contains("data.batch_size"));
  EXPECT_THAT(experiment.metrics,
              Contains(std::make_pair(std::string("val"), std::string("accuracy"))));
  testing::DecodedHParams start =
      testing::decode_hparams(hparams["_hparams_/session_start_info"].at(0).second.plugin_content);
  EXPECT_EQ(start.hparams.at("optimizer.lr"), "0.02") << "--set counts as given";
  EXPECT_EQ(start.hparams.at("model.type"), "sequential");
  testing::DecodedHParams end =
      testing::decode_hparams(hparams["_hparams_/session_end_info"].at(0).second.plugin_content);
  EXPECT_EQ(end.status, 1);  // success
}

TEST_F(TensorBoardFiles, EachPartHasItsSwitchAndFalseTurnsAllOff) {
  std::string without_histograms =
      trained("--set tensorboard.histograms=false --set tensorboard.images=false");
  EXPECT_TRUE(values_of(without_histograms + "/tensorboard/train", "histograms").empty());
  EXPECT_TRUE(values_of(without_histograms + "/tensorboard/val", "images").empty());
  EXPECT_FALSE(values_of(without_histograms + "/tensorboard/train", "scalars").empty());
  std::string off = trained("--set tensorboard=false");
  EXPECT_FALSE(fs::exists(off + "/tensorboard"));
  EXPECT_FALSE(testing::read_file(off + "/metrics.csv").empty());
}

TEST_F(TensorBoardFiles, AWrongValueIsAConfigErrorNamingTheKey) {
  testing::CommandResult result = train("--set tensorboard=3");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("tensorboard"));
  EXPECT_THAT(result.err, HasSubstr("expected true, false or a mapping of keys to values, got 3"));
  testing::CommandResult period = train("--set tensorboard.histograms_every=often");
  EXPECT_EQ(period.exit_code, 2);
  EXPECT_THAT(period.err, HasSubstr("tensorboard.histograms_every"));
}

}  // namespace
}  // namespace kiln
