// End-to-end: tabular data through feature columns (issue 21), through the kiln binary: the
// penguin example trains on TFX's TFRecord file, a CSV with string categories trains, bad
// cells are errors naming the file, the row and the feature, and an export serves raw features.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "kiln/core/json.h"
#include "kiln/io/manifest.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }
std::string testdata(const std::string& name) { return std::string(KILN_TESTDATA) + "/" + name; }

std::string run_folder(const std::string& out) {
  std::string line = out.substr(out.find("run: ") + 5);
  return line.substr(0, line.find('\n'));
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

// The last validation accuracy metrics.csv holds.
double last_val_accuracy(const std::string& run) {
  std::ifstream in(run + "/metrics.csv");
  double accuracy = -1;
  for (std::string line; std::getline(in, line);)
    if (line.find(",val,accuracy,") != std::string::npos) {
      std::string rest = line.substr(line.find(",val,accuracy,") + 14);
      accuracy = std::stod(rest.substr(0, rest.find(',')));
    }
  return accuracy;
}

TEST(Tabular, ThePenguinExampleReachesNinetyFivePercentAndKeepsItsColumns) {
  testing::TempDir dir;
  std::string config = std::string(KILN_SOURCE_DIR) + "/configs/examples/penguin/penguin.yaml";
  auto trained = testing::run_command(
      kiln("train " + config + " --quiet --runs-root " + dir.path() +
           " --set data.train.files=" + testdata("tfx_penguin_train.tfrecord.gz")));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string run = run_folder(trained.out);
  EXPECT_GE(last_val_accuracy(run), 0.95);
  Json preprocessing = read_json(run + "/preprocessing.json");
  EXPECT_EQ(preprocessing["width"], 4);
  EXPECT_EQ(preprocessing["columns"][3]["name"], "body_mass_g");
  // eval reads the columns the run fitted, and gets the accuracy training logged.
  auto evaluated = testing::run_command(kiln("eval " + run + " --split val"));
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err;
  std::ostringstream logged;
  logged.precision(4);
  logged << std::fixed << last_val_accuracy(run);
  EXPECT_THAT(evaluated.out, HasSubstr("val/accuracy         " + logged.str()));
  // kiln predict reads TFX's records through the run's columns: an answer per penguin.
  auto predicted = testing::run_command(
      kiln("predict " + run + " --input " + testdata("tfx_penguin_train.tfrecord.gz")));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  EXPECT_EQ(std::count(predicted.out.begin(), predicted.out.end(), '\n'), 234);
}

// The penguin example with its records streamed (cache: none): the columns fit on the file read
// in order, every epoch streams it again, and eval streams the validation split.
TEST(Tabular, ThePenguinExampleStreamedTrainsAndEvaluates) {
  testing::TempDir dir;
  std::string file = testdata("tfx_penguin_train.tfrecord.gz");
  std::string records = "{type: tfrecord, files: " + file +
                        ", features: {species: {dtype: int64}}, input: [culmen_length_mm, "
                        "culmen_depth_mm, flipper_length_mm, body_mass_g], target: species, "
                        "cache: none}";
  std::string config = std::string(KILN_SOURCE_DIR) + "/configs/examples/penguin/penguin.yaml";
  auto trained = testing::run_command(kiln(
      "train " + config + " --quiet --runs-root " + dir.path() + " --set 'data.train=" + records +
      "' --set 'data.val=" + records + "' --set data.val_fraction=0"));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string run = run_folder(trained.out);
  EXPECT_GE(last_val_accuracy(run), 0.95);
  EXPECT_EQ(read_json(run + "/preprocessing.json")["width"], 4);
  auto evaluated = testing::run_command(kiln("eval " + run + " --split val"));
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err;
  EXPECT_THAT(evaluated.out, HasSubstr("val/accuracy"));
}

// Points with a color, a shape and a size; "in" when red or blue and larger than 5, or square.
std::string shapes_csv(int rows, uint32_t seed) {
  const char* colors[] = {"red", "green", "blue", "yellow"};
  const char* shapes[] = {"circle", "square", "triangle"};
  std::string text = "color,size,shape,label\n";
  uint32_t state = seed;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int i = 0; i < rows; ++i) {
    std::string color = colors[(next() >> 16) % 4], shape = shapes[(next() >> 16) % 3];
    double size = double((next() >> 8) % 1000) / 100.0;
    bool in = ((color == "red" || color == "blue") && size > 5) || shape == "square";
    text += color + "," + std::to_string(size) + "," + shape + "," + (in ? "in" : "out") + "\n";
  }
  return text;
}

// What the shapes configs share after their data and model.
const std::string kShapesTraining =
    "loss: cross_entropy\nmetrics: [accuracy]\n"
    "optimizer: {type: adam, lr: 0.01}\n"
    "train: {max: 15 epochs, monitor: val/accuracy, mode: max}\nruntime: {threads: 1}\n";

std::string shapes_config(const std::string& train, const std::string& val) {
  return "version: 1\nname: shapes\nseed: 1\ndata:\n"
         "  train: {type: csv, file: " +
         train +
         ", input: [color, size, shape], target: label}\n"
         "  val: {type: csv, file: " +
         val +
         ", input: [color, size, shape], target: label}\n"
         "  columns:\n"
         "    color: categorical\n"
         "    shape: categorical\n"
         "    size: {type: numeric, normalize: zscore}\n"
         "  batch_size: 32\n"
         "model: {type: sequential, layers: [{type: linear, out: 32}, relu, {type: linear, out: "
         "2}]}\n" +
         kShapesTraining;
}

// `kiln train` of the config `text`, written into `dir` with a training and a validation file
// of shapes; the runs are kept in `dir`.
testing::CommandResult train_shapes(const testing::TempDir& dir,
                                    std::string (*config)(const std::string&, const std::string&)) {
  std::string file = dir.write("shapes.yaml", config(dir.write("train.csv", shapes_csv(2000, 7)),
                                                     dir.write("val.csv", shapes_csv(400, 8))));
  return testing::run_command(kiln("train " + file + " --quiet --runs-root " + dir.path()));
}

TEST(Tabular, ACsvWithStringCategoriesTrains) {
  testing::TempDir dir;
  auto trained = train_shapes(dir, shapes_config);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_GE(last_val_accuracy(run_folder(trained.out)), 0.95);
  // The vocabularies: most frequent first.
  Json preprocessing = read_json(run_folder(trained.out) + "/preprocessing.json");
  EXPECT_EQ(preprocessing["columns"][0]["fitted"]["vocabulary"].size(), 4u);
  EXPECT_EQ(preprocessing["width"], 5 + 1 + 4);
}

TEST(Tabular, AStringInANumericColumnNamesTheFileRowAndFeature) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv",
                                "color,size,shape,label\nred,1,circle,in\n"
                                "blue,big,square,out\n");
  std::string config = dir.write("shapes.yaml", shapes_config(train, train));
  auto result =
      testing::run_command(kiln("train " + config + " --quiet --runs-root " + dir.path()));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr(train + ", record 1"));
  EXPECT_THAT(result.err, HasSubstr("feature \"size\" holds the string \"big\""));
}

TEST(Tabular, AColumnNotInTheInputIsAConfigErrorNamingIt) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv", "color,size,shape,label\nred,1,circle,in\n");
  std::string text = shapes_config(train, train);
  text.replace(text.find("    color: categorical\n"), 0, "    colour: categorical\n");
  auto result = testing::run_command(kiln("train " + dir.write("c.yaml", text) + " --quiet"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("data.columns.colour"));
}

TEST(Tabular, AFeatureNoRecordHasIsWarnedOfWithTheNearestNameAndAnEmptyColumnIsDescribed) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv",
                                "color,size,shape,gone,label\nred,1,circle,,in\n"
                                "blue,2,square,,out\n");
  std::string text = shapes_config(train, train);
  std::string misspelt = text;
  misspelt.replace(misspelt.find("    shape: categorical\n"), 23,
                   "    shape: {type: categorical, feature: shap}\n");
  auto result = testing::run_command(
      kiln("train " + dir.write("m.yaml", misspelt) + " --quiet --runs-root " + dir.file("runs")));
  // It trains (tf.Example leaves a missing value out: a feature may be missing everywhere), and
  // says so, with the name the records have.
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("kiln: warning: data.columns.shape.feature: no training "
                                    "record has a feature \"shap\" (did you mean \"shape\"?); it "
                                    "is missing in every record (the first record's features "
                                    "are: color, gone, shape, size)"));
  EXPECT_THAT(result.err, HasSubstr("kiln: warning: data.columns.shape: no training record has a "
                                    "value of \"shap\": its vocabulary is empty"));
  // A column of empty cells is there, missing in every record: data stats lists it so.
  auto stats = testing::run_command(kiln("data stats " + dir.write("s.yaml", text) + " --json"));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  Json gone = Json::parse(stats.out)["features"]["gone"];
  EXPECT_EQ(gone["type"], "none");
  EXPECT_EQ(gone["missing"], 2);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(Tabular, DataStatsDescribesThePenguinFeatures) {
  std::string config = std::string(KILN_SOURCE_DIR) + "/configs/examples/penguin/penguin.yaml";
  auto result =
      testing::run_command(kiln("data stats " + config + " --json --set data.train.files=" +
                                testdata("tfx_penguin_train.tfrecord.gz")));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  Json stats = Json::parse(result.out);
  // 234 penguins, a fifth carved out for validation: the 187 the columns are fitted on.
  EXPECT_EQ(stats["records"], 187);
  EXPECT_EQ(stats["features"]["species"]["type"], "int64_list");
  EXPECT_EQ(stats["features"]["species"]["distinct"], 3);
  EXPECT_EQ(stats["features"]["body_mass_g"]["missing"], 0);
  EXPECT_EQ(stats["preprocessing"]["width"], 4);
  auto table = testing::run_command(kiln("data stats " + config + " --set data.train.files=" +
                                         testdata("tfx_penguin_train.tfrecord.gz")));
  EXPECT_THAT(table.out, HasSubstr("187 training records"));
  EXPECT_THAT(table.out, HasSubstr("culmen_depth_mm          float_list       187        0"));
}

TEST(Tabular, DataStatsOfImagesSaysItReadsTabularData) {
  std::string config = std::string(KILN_SOURCE_DIR) + "/configs/examples/fashion_mnist/mlp.yaml";
  auto result = testing::run_command(kiln("data stats " + config));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("data stats reads tabular training data"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(Tabular, AValidationSplitWithOtherInputsIsAConfigError) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv", "color,size,shape,label\nred,1,circle,in\n");
  std::string text = shapes_config(train, train);
  text.replace(text.find("input: [color, size, shape], target: label}\n  columns"), 27,
               "input: [color, shape, size]");
  auto result = testing::run_command(kiln("train " + dir.write("c.yaml", text) + " --quiet"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("data.val.input"));
  EXPECT_THAT(result.err, HasSubstr("differs from data.train's input"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The shapes through named inputs: a wide part of one-hot categories and their cross, a deep
// part of the size and the color embedded.
std::string wide_deep_config(const std::string& train, const std::string& val) {
  std::string inputs =
      "inputs: {wide: [color, shape, color_x_shape], deep: [size, color_index]}, target: label}\n";
  return "version: 1\nname: shapes_wide_deep\nseed: 1\ndata:\n"
         "  train: {type: csv, file: " +
         train + ", " + inputs + "  val: {type: csv, file: " + val + ", " + inputs +
         "  columns:\n"
         "    color: categorical\n"
         "    shape: categorical\n"
         "    color_x_shape: {type: crossed, features: [color, shape], hash_buckets: 16}\n"
         "    size: {type: numeric, normalize: zscore}\n"
         "    color_index: {type: categorical, feature: color, output: index, embedding_dim: 2}\n"
         "  batch_size: 32\n"
         "model: {type: wide_deep, num_classes: 2, hidden: [16]}\n" +
         kShapesTraining;
}

TEST(Tabular, AWideAndDeepModelTrainsOnNamedInputsAndEvalRebuildsIt) {
  testing::TempDir dir;
  auto trained = train_shapes(dir, wide_deep_config);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string run = run_folder(trained.out);
  EXPECT_GE(last_val_accuracy(run), 0.95);
  Json preprocessing = read_json(run + "/preprocessing.json");
  EXPECT_EQ(preprocessing["inputs"]["deep"], Json::array({"size", "color_index"}));
  // wide: 4 colors + 1 OOV, 3 shapes + 1 OOV, 16 buckets; deep: the size and one index.
  Json layout = read_json(run + "/inputs.json")["inputs"][0]["layout"];
  EXPECT_EQ(layout["parts"][1], Json({{"name", "deep"}, {"offset", 25}, {"width", 2}}));
  EXPECT_EQ(layout["indices"][0]["cardinality"], 5);
  auto evaluated = testing::run_command(kiln("eval " + run + " --split val"));
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err;
  std::ostringstream logged;
  logged.precision(4);
  logged << std::fixed << last_val_accuracy(run);
  EXPECT_THAT(evaluated.out, HasSubstr("val/accuracy         " + logged.str()));
  // The export carries the fitted columns; a damaged copy is refused, naming it.
  auto exported = testing::run_command(kiln("export " + run + " --to " + dir.file("export")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string version = dir.file("export/shapes_wide_deep/1");
  EXPECT_EQ(read_json(version + "/preprocessing.json"), preprocessing);
  // kiln predict reads the CSV through them: one answer per row.
  auto predicted =
      testing::run_command(kiln("predict " + version + " --input " + dir.file("val.csv") +
                                " --output " + dir.file("predictions.jsonl")));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::ifstream answers(dir.file("predictions.jsonl"));
  int lines = 0;
  for (std::string line; std::getline(answers, line);) lines += !line.empty();
  EXPECT_EQ(lines, 400);
  std::ofstream(version + "/preprocessing.json") << R"({"format": "kiln.preprocessing"})";
  auto refused = testing::run_command(
      kiln("predict " + version + " --input " + dir.write("row.jsonl", "[0]\n")));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr(version + "/preprocessing.json"));
  EXPECT_THAT(refused.err, HasSubstr("checksum or size differs from the MANIFEST"));
  // Edited with its MANIFEST line to match, what it says is still checked.
  std::istringstream listed(testing::read_file(version + "/MANIFEST"));
  std::string manifest, damaged = R"({"format": "kiln.preprocessing"})";
  for (std::string line; std::getline(listed, line);)
    manifest += line.find(" preprocessing.json") == std::string::npos
                    ? line + "\n"
                    : io::manifest_line("preprocessing.json", damaged);
  std::ofstream(version + "/MANIFEST") << manifest;
  auto still =
      testing::run_command(kiln("predict " + version + " --input " + dir.file("row.jsonl")));
  EXPECT_NE(still.exit_code, 0);
  EXPECT_THAT(still.err, HasSubstr("preprocessing.json: its \"columns\" list is missing"));
}

// train_shapes, then `kiln export` of the run to dir/export: the model's folder there. Either
// failing throws, with its error output.
std::string exported_shapes(const testing::TempDir& dir,
                            std::string (*config)(const std::string&, const std::string&)) {
  auto trained = train_shapes(dir, config);
  if (trained.exit_code != 0) throw std::runtime_error("kiln train: " + trained.err);
  auto exported = testing::run_command(
      kiln("export " + run_folder(trained.out) + " --to " + dir.file("export")));
  if (exported.exit_code != 0) throw std::runtime_error("kiln export: " + exported.err);
  for (const auto& entry : fs::directory_iterator(dir.file("export"))) return entry.path().string();
  throw std::runtime_error("kiln export wrote no model folder");
}

// An export's preprocessing.json writes the row its model.yaml's reader lists, in that order: a
// copy whose columns were swapped (of the same total width), or one deleted with its MANIFEST
// line, was served without a word, each number fed to the weights of another.
TEST(Tabular, AnExportsColumnsMustBeThoseItsReaderFeedsTheModel) {
  testing::TempDir dir;
  std::string good = exported_shapes(dir, shapes_config) + "/1";
  std::string row = dir.write("row.jsonl", R"({"color": "red", "size": 6.5, "shape": "circle"})"
                                           "\n");
  // A copy of the version with preprocessing.json replaced by `text` (none: deleted), its
  // MANIFEST rewritten to match as a hand editor could.
  auto edited = [&](const std::string& name, const std::optional<std::string>& text) {
    std::string version = dir.file(name + "/1");
    fs::create_directories(version);
    std::string manifest;
    for (const char* file : {"model.yaml", "model.safetensors", "preprocessing.json"}) {
      std::string bytes = testing::read_file(good + "/" + file);
      if (std::string(file) == "preprocessing.json") {
        if (!text) continue;
        bytes = *text;
      }
      std::ofstream(version + "/" + file, std::ios::binary) << bytes;
      manifest += io::manifest_line(file, bytes);
    }
    std::ofstream(version + "/MANIFEST") << manifest;
    return testing::run_command(kiln("predict " + version + " --input " + row));
  };
  Json swapped = read_json(good + "/preprocessing.json");
  std::swap(swapped["columns"][0], swapped["columns"][2]);  // color and shape
  auto reordered = edited("swapped", swapped.dump());
  EXPECT_NE(reordered.exit_code, 0);
  EXPECT_THAT(reordered.err,
              HasSubstr("swapped/1/preprocessing.json: its columns [shape, size, color] are not "
                        "those model.yaml's reader feeds the model, in their order: [color, size, "
                        "shape]"));
  auto deleted = edited("deleted", std::nullopt);
  EXPECT_NE(deleted.exit_code, 0);
  EXPECT_THAT(deleted.err, HasSubstr("deleted/1/preprocessing.json: missing: model.yaml's reader "
                                     "feeds the model the feature columns [color, size, shape], "
                                     "which this file holds"));
  EXPECT_EQ(edited("kept", testing::read_file(good + "/preprocessing.json")).exit_code, 0);
}

// The first `count` rows of a shapes CSV as JSON objects of raw features, as a client sends them.
std::vector<Json> shapes_rows(const std::string& csv, size_t count) {
  std::vector<Json> rows;
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // the header
  while (rows.size() < count && std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    rows.push_back({{"color", cells[0]}, {"size", std::stod(cells[1])}, {"shape", cells[2]}});
  }
  return rows;
}

void expect_same_answer(const Json& served, const Json& offline) {
  EXPECT_EQ(served["classes"], offline["classes"]);
  ASSERT_EQ(served["probabilities"].size(), 2u) << served.dump();
  for (size_t k = 0; k < 2; ++k)
    EXPECT_NEAR(served["probabilities"][k].get<double>(), offline["probabilities"][k].get<double>(),
                1e-6);
}

// kiln serve of a wide_deep export takes raw feature values, strings included: :predict in row
// and columnar form, :classify and :regress's examples; each answers what kiln predict computes
// offline for the same rows of the CSV file, and a bad value is a 400 naming the feature. gRPC's
// Classify of the same rows answers what :classify does.
TEST(ServeTabular, RawFeaturesServedAnswerAsTheCsvRowsDoOffline) {
  testing::TempDir dir;
  std::string model = exported_shapes(dir, wide_deep_config);
  std::vector<Json> rows = shapes_rows(shapes_csv(400, 8), 6);
  auto predicted =
      testing::run_command(kiln("predict " + model + "/1 --input " + dir.file("val.csv")));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::vector<Json> offline = testing::json_lines(predicted.out);
  ASSERT_GE(offline.size(), rows.size());
  // The same rows as JSON lines of raw features, offline.
  std::string jsonl;
  for (const Json& row : rows) jsonl += row.dump() + "\n";
  auto from_jsonl = testing::run_command(
      kiln("predict " + model + "/1 --input " + dir.write("rows.jsonl", jsonl)));
  ASSERT_EQ(from_jsonl.exit_code, 0) << from_jsonl.err;
  std::vector<Json> lines = testing::json_lines(from_jsonl.out);
  ASSERT_EQ(lines.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) expect_same_answer(lines[i], offline[i]);

  testing::ChildProcess server(kiln("serve " + model + " --port 0 --grpc-port 0"));
  testing::ServedPorts ports = testing::served_ports(server);
  int port = ports.rest;
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  auto post = [&](const std::string& verb, const Json& body) {
    std::pair<int, std::string> answer =
        testing::post_json(port, "/v1/models/shapes_wide_deep:" + verb, body);
    EXPECT_NE(answer.first, 0) << "no answer";
    return answer;
  };
  auto [status, body] = post("predict", {{"instances", rows}});
  ASSERT_EQ(status, 200) << body;
  Json predictions = Json::parse(body)["predictions"];
  ASSERT_EQ(predictions.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) expect_same_answer(predictions[i], offline[i]);

  Json columns = {{"color", Json::array()}, {"size", Json::array()}, {"shape", Json::array()}};
  for (const Json& row : rows)
    for (const char* name : {"color", "size", "shape"}) columns[name].push_back(row[name]);
  std::tie(status, body) = post("predict", {{"inputs", columns}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(Json::parse(body)["outputs"]["classes"][0], offline[0]["classes"]);

  std::tie(status, body) = post("classify", {{"examples", rows}});
  ASSERT_EQ(status, 200) << body;
  Json results = Json::parse(body)["results"];
  ASSERT_EQ(results.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(results[i][k][0], std::vector<std::string>({"in", "out"})[k]);
      EXPECT_NEAR(results[i][k][1].get<double>(), offline[i]["probabilities"][k].get<double>(),
                  1e-5);
    }

  std::tie(status, body) = post("classify", {{"examples", {{{"size", "big"}, {"color", "red"}}}}});
  EXPECT_EQ(status, 400);
  EXPECT_THAT(body, HasSubstr("feature \\\"size\\\" holds the string \\\"big\\\""));
  std::tie(status, body) = post("regress", {{"examples", rows}});
  EXPECT_EQ(status, 400);
  EXPECT_THAT(body, HasSubstr(":regress needs an output 'predictions'"));

  // Over gRPC, a generated Python client's Classify of the same rows as tf.Examples answers what
  // :classify answers (tests/grpc/grpc_vs_rest.py).
  auto over_grpc = testing::grpc_vs_rest(ports, "shapes_wide_deep",
                                         dir.write("examples.json", Json(rows).dump()));
  EXPECT_EQ(over_grpc.exit_code, 0) << over_grpc.out << over_grpc.err;
  EXPECT_THAT(over_grpc.out, HasSubstr("\"classify equals REST's\": {\n  \"ok\": true"));
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

TEST(Tabular, AWideAndDeepModelOverOneVectorSaysToNameTheInputs) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv", "color,size,shape,label\nred,1,circle,in\n");
  std::string text = shapes_config(train, train);
  text.replace(text.find("model: "), text.find("\nloss:") - text.find("model: "),
               "model: {type: wide_deep, num_classes: 2}");
  auto result = testing::run_command(kiln("train " + dir.write("c.yaml", text) + " --quiet"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("model.wide"));
  EXPECT_THAT(result.err, HasSubstr("inputs: {wide: [columns...], ...}"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(Tabular, OnCorruptSkipDropsAndCountsBadRowsAndEvalCountsUnseenCategories) {
  testing::TempDir dir;
  // Three bad rows among good ones: a string for the size, a row of two cells, an empty label.
  std::string bad = "red,big,circle,in\nblue,3\ngreen,2,square,\n";
  std::string train = dir.write("train.csv", shapes_csv(1000, 7) + bad);
  // The validation data also has a color the training data lacks.
  std::string text = shapes_config(
      train, dir.write("val.csv", shapes_csv(200, 8) + bad + "purple,3,circle,out\n"));
  for (size_t at = text.find("target: label}"); at != std::string::npos;
       at = text.find("target: label}", at + 1))
    text.insert(at + 13, ", on_corrupt: skip");
  auto trained = testing::run_command(
      kiln("train " + dir.write("c.yaml", text) + " --quiet --runs-root " + dir.path()));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string run = run_folder(trained.out);
  std::ifstream metrics(run + "/metrics.csv");
  std::stringstream logged;
  logged << metrics.rdbuf();
  EXPECT_THAT(logged.str(), HasSubstr(",train,skipped_records,3,"));
  EXPECT_GE(last_val_accuracy(run), 0.9);
  auto evaluated = testing::run_command(kiln("eval " + run + " --split val"));
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err;
  EXPECT_THAT(evaluated.err,
              HasSubstr("val: values in no vocabulary went to OOV buckets: color 1"));
  // The same file without skip stops at the first bad row, naming it.
  text = shapes_config(train, train);
  auto stopped = testing::run_command(kiln("train " + dir.write("d.yaml", text) + " --quiet"));
  EXPECT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_THAT(stopped.err, HasSubstr(train + ", record 1001"));
}

}  // namespace
}  // namespace kiln
