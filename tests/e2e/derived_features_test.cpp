// End-to-end: derived features (data.derived, issue 42) through the kiln binary. Raw taxi trips
// in TFX's style (fare, tips, trip_miles, payment_type; some fares missing) train with their
// label derived in the config as TFX's taxi example derives it, export, and answer the same in
// `kiln predict` of the TFRecord file, of raw JSON rows, and in `kiln serve`'s :predict and
// :classify of raw features, gRPC's Classify and Predict of named raw features, and
// `kiln predict --server grpc://`; the metadata lists the raw features; a mistake in an expression
// is named by its character.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <random>

#include "kiln/core/json.h"
#include "kiln/io/example.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace derived_features_test {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// One trip as raw features, as TFX's taxi data has them: card payers tip 21-30% of the fare,
// cash payers nothing; every 10th trip has no fare.
io::Features trip(std::mt19937& random, int index) {
  std::uniform_real_distribution<float> fare(4, 40), share(0.21f, 0.3f), miles(0.5f, 12);
  bool card = index % 3 != 0;
  float paid = fare(random);
  io::Features features = {{"tips", io::float_feature({card ? paid * share(random) : 0.0f})},
                           {"trip_miles", io::float_feature({miles(random)})},
                           {"payment_type", io::bytes_feature({card ? "Credit Card" : "Cash"})}};
  if (index % 10 != 9) features["fare"] = io::float_feature({paid});
  return features;
}

std::string write_trips(const testing::TempDir& dir, const std::string& name, int count,
                        unsigned seed, std::vector<io::Features>* kept = nullptr) {
  std::mt19937 random(seed);
  io::TfRecordWriter writer(dir.file(name));
  for (int i = 0; i < count; ++i) {
    io::Example example{trip(random, i)};
    if (kept) kept->push_back(example.features);
    writer.write(io::encode_example(example));
  }
  writer.close();
  return dir.file(name);
}

std::string taxi_config(
    const std::string& train, const std::string& val,
    const std::string& label = "where(is_missing(fare), 0, tips > 0.2 * fare)") {
  std::string split =
      "{type: tfrecord, features: {big_tipper: {dtype: int64}}, "
      "input: [log_fare, trip_miles, payment_type], target: big_tipper, files: ";
  return "version: 1\nname: taxi\nseed: 1\n"
         "data:\n"
         "  train: " +
         split + train +
         "}\n"
         "  val: " +
         split + val +
         "}\n"
         "  derived:\n"
         "    big_tipper: \"" +
         label +
         "\"\n"
         "    log_fare: \"log1p(fare)\"\n"
         "  columns:\n"
         "    log_fare: {type: numeric, normalize: zscore, missing: mean}\n"
         "    trip_miles: {type: numeric, normalize: zscore}\n"
         "    payment_type: {type: categorical}\n"
         "  batch_size: 32\n"
         "model: {type: dnn, num_classes: 2, hidden: [8]}\n"
         "loss: cross_entropy\nmetrics: [accuracy]\n"
         "optimizer: {type: adam, lr: 0.02}\n"
         "train: {max: 6 epochs, validate_every: 1 epoch, monitor: val/accuracy, mode: max}\n"
         "runtime: {threads: 1}\n";
}

// A served or predicted answer against the offline one: the same class, probabilities within
// float rounding.
void expect_same_answer(const Json& answer, const Json& offline) {
  EXPECT_EQ(answer["classes"], offline["classes"]) << answer.dump() << offline.dump();
  ASSERT_EQ(answer["probabilities"].size(), 2u) << answer.dump();
  for (size_t k = 0; k < 2; ++k)
    EXPECT_NEAR(answer["probabilities"][k].get<double>(), offline["probabilities"][k].get<double>(),
                1e-6);
}

// A :classify answer (status, body) against `kiln predict`'s answers to the same `count`
// examples: each class's score is its probability there, within float rounding.
void expect_classified_as(const std::pair<int, std::string>& answer,
                          const std::vector<Json>& offline, size_t count) {
  ASSERT_EQ(answer.first, 200) << answer.second;
  Json results = Json::parse(answer.second)["results"];
  ASSERT_EQ(results.size(), count);
  for (size_t i = 0; i < count; ++i)
    for (size_t k = 0; k < 2; ++k)
      EXPECT_NEAR(results[i][k][1].get<double>(), offline[i]["probabilities"][k].get<double>(),
                  1e-6);
}

// Raw features of a trip as JSON, as a client sends them (a missing fare left out).
Json raw_json(const io::Features& features) {
  Json row = Json::object();
  for (const auto& [name, feature] : features) {
    if (feature.kind == io::Feature::Kind::kBytes) row[name] = feature.bytes[0];
    if (feature.kind == io::Feature::Kind::kFloat) row[name] = feature.floats[0];
  }
  return row;
}

TEST(DerivedFeatures, RawTaxiTripsTrainWithTheirLabelDerivedExportAndServeTheSame) {
  testing::TempDir dir;
  std::vector<io::Features> held_out;
  std::string train = write_trips(dir, "train.tfrecord", 600, 1);
  std::string val = write_trips(dir, "val.tfrecord", 120, 2, &held_out);
  auto trained =
      testing::run_command(kiln("train " + dir.write("taxi.yaml", taxi_config(train, val)) +
                                " --quiet --runs-root " + dir.file("runs")));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string run = testing::run_dir_of(trained.out);
  // The label follows the payment type: a model that reads the derived label learns it.
  Json evaluated =
      testing::json_lines(testing::run_command(kiln("eval " + run + " --split val --json")).out)[0];
  EXPECT_GT(evaluated.value("val/accuracy", 0.0), 0.85) << evaluated.dump();
  Json preprocessing = Json::parse(testing::read_file(run + "/preprocessing.json"));
  EXPECT_EQ(preprocessing["derived"]["log_fare"], "log1p(fare)");

  auto exported = testing::run_command(kiln("export " + run + " --to " + dir.file("export")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string model = dir.file("export/taxi");
  auto from_records = testing::run_command(kiln("predict " + model + "/1 --input " + val));
  ASSERT_EQ(from_records.exit_code, 0) << from_records.err;
  std::vector<Json> offline = testing::json_lines(from_records.out);
  ASSERT_EQ(offline.size(), held_out.size());

  std::vector<Json> rows;
  std::string jsonl;
  for (size_t i = 0; i < 12; ++i) {
    rows.push_back(raw_json(held_out[i]));
    jsonl += rows.back().dump() + "\n";
  }
  auto from_rows = testing::run_command(
      kiln("predict " + model + "/1 --input " + dir.write("rows.jsonl", jsonl)));
  ASSERT_EQ(from_rows.exit_code, 0) << from_rows.err;
  std::vector<Json> lines = testing::json_lines(from_rows.out);
  ASSERT_EQ(lines.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) expect_same_answer(lines[i], offline[i]);

  testing::ChildProcess server(kiln("serve " + model + " --port 0 --grpc-port 0"));
  testing::ServedPorts ports = testing::served_ports(server);
  int port = ports.rest;
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  auto post = [&](const std::string& verb, const Json& body) {
    std::pair<int, std::string> answer = testing::post_json(port, "/v1/models/taxi:" + verb, body);
    EXPECT_NE(answer.first, 0) << "no answer";
    return answer;
  };
  auto [status, body] = post("predict", {{"instances", rows}});
  ASSERT_EQ(status, 200) << body;
  Json predictions = Json::parse(body)["predictions"];
  for (size_t i = 0; i < rows.size(); ++i) expect_same_answer(predictions[i], offline[i]);
  expect_classified_as(post("classify", {{"examples", rows}}), offline, rows.size());
  // gRPC's Classify of the same raw trips as tf.Examples, from a generated Python client,
  // answers as :classify does (tests/grpc/grpc_vs_rest.py): the derived features are computed
  // there too.
  // gRPC's Predict of the raw features as named tensors, as the metadata lists them (a dense
  // tensor has a fare in every trip, so the trips without one are left out there).
  std::string with_fares;
  for (const Json& row : rows)
    if (row.contains("fare")) with_fares += row.dump() + "\n";
  auto over_grpc =
      testing::grpc_vs_rest(ports, "taxi", dir.write("examples.json", Json(rows).dump()),
                            dir.write("with_fares.jsonl", with_fares));
  EXPECT_EQ(over_grpc.exit_code, 0) << over_grpc.out << over_grpc.err;
  for (const char* check :
       {"metadata equals REST's", "classify equals REST's", "predict equals REST's"})
    EXPECT_THAT(over_grpc.out, HasSubstr(fmt::format("\"{}\": {{\n  \"ok\": true", check)));
  // The metadata lists the raw features a client sends, with their types as the training
  // records held them; not the row of numbers the columns write.
  auto [got, metadata] = testing::get(port, "/v1/models/taxi/metadata");
  ASSERT_EQ(got, 200) << metadata;
  Json inputs = Json::parse(
      metadata)["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"];
  ASSERT_EQ(inputs.size(), 3u) << inputs.dump();
  EXPECT_EQ(inputs["fare"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(inputs["trip_miles"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(inputs["payment_type"]["dtype"], "DT_STRING");
  // `kiln predict --server grpc://` sends each row as those tensors, a missing fare left out,
  // and tips passed over as the REST API passes it over: the metadata does not list what only
  // the label reads (a campaign's find: such rows were refused over gRPC alone).
  std::string as_rest_takes_them;
  for (const Json& row : rows) as_rest_takes_them += row.dump() + "\n";
  auto over_client = testing::run_command(
      kiln(fmt::format("predict --server grpc://127.0.0.1:{}/v1/models/taxi --input {}", ports.grpc,
                       dir.write("rows.jsonl", as_rest_takes_them))));
  ASSERT_EQ(over_client.exit_code, 0) << over_client.err << over_client.out;
  std::vector<Json> answered = testing::json_lines(over_client.out);
  ASSERT_EQ(answered.size(), rows.size()) << over_client.out;
  for (size_t i = 0; i < rows.size(); ++i) expect_same_answer(answered[i], offline[i]);
  // A fare sent as text reaches the expression as text: a 400 naming the expression.
  Json bad = rows[0];
  bad["fare"] = "ten";
  std::tie(status, body) = post("classify", {{"examples", {bad}}});
  EXPECT_EQ(status, 400);
  EXPECT_THAT(body, HasSubstr("log1p(fare)"));
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

// Raw features of a record as JSON, as a client sends them: every value, of each kind.
Json record_json(const io::Features& features) {
  Json row = Json::object();
  for (const auto& [name, feature] : features) {
    if (feature.size() != 1) continue;  // a gap: left out
    if (feature.kind == io::Feature::Kind::kBytes) row[name] = feature.bytes[0];
    if (feature.kind == io::Feature::Kind::kFloat) row[name] = feature.floats[0];
    if (feature.kind == io::Feature::Kind::kInt64) row[name] = feature.ints[0];
  }
  return row;
}

// TFX's own taxi data (configs/examples/chicago_taxi): its records as CsvExampleGen writes them
// train with the label derived in the config, and the served model lists the raw features with
// the types those records hold, and answers :classify of raw records as `kiln predict` does.
TEST(DerivedFeatures, TheChicagoTaxiExampleTrainsOnTfxsDataAndServesItsRawFeatures) {
  testing::TempDir dir;
  std::string folder = std::string(KILN_SOURCE_DIR) + "/configs/examples/chicago_taxi/";
  auto trained = testing::run_command(
      kiln("train " + folder + "taxi_wide_deep.yaml --quiet --set 'train.max=2 epochs' " +
           "--set data.train.files=" + folder + "taxi_train.tfrecord.gz --set data.test.files=" +
           folder + "taxi_eval.tfrecord.gz --runs-root " + dir.file("runs")));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  // TFX's pickup_census_tract is empty in every trip: trained, with a warning.
  EXPECT_THAT(trained.err, HasSubstr("data.columns.pickup_census_tract"));
  std::string run = testing::run_dir_of(trained.out);
  Json tested = testing::json_lines(
      testing::run_command(kiln("eval " + run + " --split test --json")).out)[0];
  EXPECT_GT(tested.value("test/roc_auc", 0.0), 0.9) << tested.dump();

  auto exported = testing::run_command(kiln("export " + run + " --to " + dir.file("export")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string records = folder + "taxi_eval.tfrecord.gz";
  auto predicted = testing::run_command(
      kiln("predict " + dir.file("export/chicago_taxi/1") + " --input " + records));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::vector<Json> offline = testing::json_lines(predicted.out);
  std::vector<Json> rows;
  io::TfRecordReader reader(records);
  std::string bytes;
  while (rows.size() < 16 && reader.next(bytes))
    rows.push_back(record_json(io::parse_example(bytes).features));

  testing::ChildProcess server(kiln("serve " + dir.file("export/chicago_taxi") + " --port 0"));
  int port = testing::served_ports(server).rest;
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  auto [got, metadata] = testing::get(port, "/v1/models/chicago_taxi/metadata");
  ASSERT_EQ(got, 200) << metadata;
  Json inputs = Json::parse(
      metadata)["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"];
  EXPECT_EQ(inputs["fare"]["dtype"], "DT_FLOAT");
  EXPECT_EQ(inputs["company"]["dtype"], "DT_STRING");
  EXPECT_EQ(inputs["trip_start_hour"]["dtype"], "DT_INT64");
  EXPECT_EQ(inputs["dropoff_census_tract"]["dtype"], "DT_FLOAT");
  EXPECT_FALSE(inputs.contains("pickup_census_tract")) << "no training record held a value";
  EXPECT_FALSE(inputs.contains("tips")) << "only the label reads it";
  EXPECT_EQ(inputs.size(), 15u) << inputs.dump();
  expect_classified_as(
      testing::post_json(port, "/v1/models/chicago_taxi:classify", {{"examples", rows}}), offline,
      rows.size());
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

// Trips as CSV text: fare (empty when missing), tips unless left out, trip_miles, payment_type.
std::string trips_csv(const std::vector<io::Features>& trips, bool with_tips) {
  std::string text =
      with_tips ? "fare,tips,trip_miles,payment_type\n" : "fare,trip_miles,payment_type\n";
  for (const io::Features& t : trips) {
    text += t.count("fare") ? fmt::format("{}", t.at("fare").floats[0]) : "";
    if (with_tips) text += fmt::format(",{}", t.at("tips").floats[0]);
    text += fmt::format(",{},{}\n", t.at("trip_miles").floats[0], t.at("payment_type").bytes[0]);
  }
  return text;
}

std::vector<io::Features> trips(int count, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<io::Features> made;
  for (int i = 0; i < count; ++i) made.push_back(trip(random, i));
  return made;
}

// The same trips in CSV files: the label is derived into a column of its own; `kiln predict` of
// a file without tips (no label to derive) answers as :classify of the same raw rows.
TEST(DerivedFeatures, RawTaxiRowsOfACsvFileTrainWithTheirLabelDerived) {
  testing::TempDir dir;
  std::vector<io::Features> held_out = trips(60, 2);
  std::string config = taxi_config("", "");
  for (const char* split : {"train", "val"}) {
    std::string file = dir.write(std::string(split) + ".csv",
                                 trips_csv(split[0] == 't' ? trips(600, 1) : held_out, true));
    std::string from = std::string("  ") + split + ": {type: tfrecord";
    size_t at = config.find(from);
    size_t end = config.find('\n', at);
    config.replace(at, end - at,
                   std::string("  ") + split + ": {type: csv, file: " + file +
                       ", input: [log_fare, trip_miles, payment_type], target: big_tipper}");
  }
  auto trained = testing::run_command(
      kiln("train " + dir.write("taxi.yaml", config) + " --quiet --runs-root " + dir.file("runs")));
  ASSERT_EQ(trained.exit_code, 0) << trained.err << config;
  std::string run = testing::run_dir_of(trained.out);
  Json evaluated =
      testing::json_lines(testing::run_command(kiln("eval " + run + " --split val --json")).out)[0];
  EXPECT_GT(evaluated.value("val/accuracy", 0.0), 0.85) << evaluated.dump();
  auto exported = testing::run_command(kiln("export " + run + " --to " + dir.file("export")));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string model = dir.file("export/taxi");
  auto predicted = testing::run_command(kiln("predict " + model + "/1 --input " +
                                             dir.write("no_tips.csv", trips_csv(held_out, false))));
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  std::vector<Json> offline = testing::json_lines(predicted.out);
  ASSERT_EQ(offline.size(), held_out.size());

  testing::ChildProcess server(kiln("serve " + model + " --port 0"));
  int port = testing::served_ports(server).rest;
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  std::vector<Json> rows;
  for (size_t i = 0; i < 12; ++i) rows.push_back(raw_json(held_out[i]));
  expect_classified_as(testing::post_json(port, "/v1/models/taxi:classify", {{"examples", rows}}),
                       offline, rows.size());
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

// `kiln train` of ten trips with the label `label`.
testing::CommandResult train_with_label(const std::string& label) {
  testing::TempDir dir;
  std::string train = write_trips(dir, "train.tfrecord", 10, 1);
  return testing::run_command(kiln("train " +
                                   dir.write("taxi.yaml", taxi_config(train, train, label)) +
                                   " --quiet --runs-root " + dir.file("runs")));
}

TEST(DerivedFeatures, AMistakeInAnExpressionIsNamedByItsCharacter) {
  testing::CommandResult trained = train_with_label("tips > 0.2 * ");
  EXPECT_EQ(trained.exit_code, 2) << trained.err;
  EXPECT_THAT(trained.err, HasSubstr("data.derived.big_tipper"));
  EXPECT_THAT(trained.err, HasSubstr("expression \"tips > 0.2 * \", at character 14: expected a "
                                     "number, a feature's name, a 'text' or ( but the text ends"));
}

TEST(DerivedFeatures, TextWhereANumberMustStandNamesTheRecord) {
  testing::CommandResult trained = train_with_label("payment_type > 1");
  EXPECT_EQ(trained.exit_code, 1) << trained.err;
  EXPECT_THAT(trained.err, HasSubstr("train.tfrecord, record 0"));
  EXPECT_THAT(trained.err, HasSubstr("expression \"payment_type > 1\": > needs a number, and got "
                                     "the text \"Cash\""));
}

}  // namespace derived_features_test
}  // namespace kiln
