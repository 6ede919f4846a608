// Derived features (data.derived): computed in order into a record as TensorFlow would hold
// them, read back from preprocessing.json as written, and refused when they read what is
// derived below them or differ from what a run was fitted with.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/tabular/derived_features.h"
#include "kiln/tabular/feature_columns.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace derived_features_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Specs = std::vector<std::pair<std::string, std::string>>;

const Specs kTaxi = {{"big_tipper", "where(is_missing(fare), 0, tips > 0.2 * fare)"},
                     {"log_fare", "log1p(fare)"},
                     {"card", "payment_type == 'Credit Card'"},
                     {"paid_by", "where(card, 'card', payment_type)"},
                     {"log_fare_x2", "log_fare * 2"}};

io::Features trip(float fare, float tips, const std::string& payment) {
  return {{"fare", io::float_feature({fare})},
          {"tips", io::float_feature({tips})},
          {"payment_type", io::bytes_feature({payment})}};
}

TEST(DerivedFeatures, AreComputedInOrderAsTensorFlowHoldsThem) {
  DerivedFeatures derived(kTaxi, "data.derived");
  io::Features record = trip(10, 3, "Cash");
  derived.apply(record, {"taxi.tfrecord", 0, 0});
  EXPECT_EQ(record.at("big_tipper"), io::int64_feature({1}));  // a comparison: int64
  EXPECT_EQ(record.at("log_fare").kind, io::Feature::Kind::kFloat);
  EXPECT_FLOAT_EQ(record.at("log_fare").floats[0], std::log1p(10.0f));
  EXPECT_EQ(record.at("card"), io::int64_feature({0}));
  EXPECT_EQ(record.at("paid_by"), io::bytes_feature({"Cash"}));  // text
  EXPECT_FLOAT_EQ(record.at("log_fare_x2").floats[0], 2 * std::log1p(10.0f));
  EXPECT_EQ(record.at("fare"), io::float_feature({10}));  // the raw features stay
  EXPECT_THAT(derived.names(),
              ElementsAre("big_tipper", "log_fare", "card", "paid_by", "log_fare_x2"));
  EXPECT_THAT(derived.features(), ElementsAre("fare", "tips", "payment_type"));
}

TEST(DerivedFeatures, AMissingResultHasNoValueAndReplacesARawOne) {
  DerivedFeatures derived({{"log_fare", "log1p(fare)"}, {"tips", "tips * 100"}}, "data.derived");
  io::Features record = {{"log_fare", io::float_feature({42})}};  // a raw feature so called
  derived.apply(record, {});
  EXPECT_EQ(record.at("log_fare"), io::Feature{}) << "no fare: no log_fare, not the raw one";
  EXPECT_EQ(record.at("tips"), io::Feature{});
  io::Features paid = {{"tips", io::float_feature({0.5f})}};
  derived.apply(paid, {});
  EXPECT_EQ(paid.at("tips"), io::float_feature({50}));
}

TEST(DerivedFeatures, AnExpressionReadsOnlyWhatIsDerivedAboveIt) {
  EXPECT_THAT(
      [] {
        DerivedFeatures({{"a", "b + 1"}, {"b", "fare"}}, "data.derived");
      },
      ::testing::ThrowsMessage<ConfigError>(
          HasSubstr("data.derived.a: expression \"b + 1\" reads b, which is derived "
                    "below it")));
  // Its own name is the raw feature it replaces.
  DerivedFeatures clipped({{"fare", "clip(fare, 0, 50)"}, {"cheap", "fare < 20"}}, "d");
  io::Features record = {{"fare", io::float_feature({80})}};
  clipped.apply(record, {});
  EXPECT_EQ(record.at("fare"), io::float_feature({50}));
  EXPECT_EQ(record.at("cheap"), io::int64_feature({0})) << "reads the clipped fare";
  EXPECT_THAT(
      [] {
        DerivedFeatures({{"a", "fare +"}}, "data.derived");
      },
      ::testing::ThrowsMessage<ConfigError>(
          HasSubstr("data.derived.a: expression \"fare +\", at character 7")));
}

TEST(DerivedFeatures, ThoseAModelsInputsNeedAreKeptInOrder) {
  DerivedFeatures derived(kTaxi, "data.derived");
  EXPECT_THAT(derived.needed_for({"log_fare_x2", "trip_miles"}).names(),
              ElementsAre("log_fare", "log_fare_x2"));
  EXPECT_THAT(derived.needed_for({"paid_by"}).names(), ElementsAre("card", "paid_by"));
  EXPECT_TRUE(derived.needed_for({"fare"}).empty());
  EXPECT_THAT(derived.needed_for({"paid_by"}).features(), ElementsAre("payment_type"));
}

TEST(DerivedFeatures, ReadBackFromTheirJsonAsWritten) {
  DerivedFeatures derived(kTaxi, "data.derived");
  Json json = derived.json();
  EXPECT_EQ(json.begin().key(), "big_tipper") << "in order";
  EXPECT_EQ(DerivedFeatures::from_json(json, "p").json(), json);
  EXPECT_TRUE(DerivedFeatures::from_json(Json(), "p").empty());
  EXPECT_THROW(DerivedFeatures::from_json(Json::array({1}), "p"), ConfigError);
  EXPECT_THROW(DerivedFeatures::from_json(Json{{"a", 3}}, "p"), ConfigError);
}

// Columns declared by `specs` over `inputs`, fitted on two trips with `derived` computed into
// them, as datasets give the records to the columns.
FeatureColumns fitted_with(const DerivedFeatures& derived, const Json& specs,
                           const std::vector<std::string>& inputs, float second_fare = 3) {
  testing::TabularRows rows({trip(1, 0, "Cash"), trip(second_fare, 1, "Cash")});
  std::vector<io::Features> computed;
  for (int64_t r = 0; r < rows.rows(); ++r) {
    computed.push_back(rows[size_t(r)]);
    derived.apply(computed.back(), {});
  }
  testing::TabularRows derived_rows(computed);
  FeatureColumns columns(testing::declared_columns(specs), inputs, "data.train.input",
                         "data.columns", derived);
  columns.fit(derived_rows, 1);
  return columns;
}

TEST(DerivedFeatures, TravelInPreprocessingJsonAndMustMatchTheRunsOnResume) {
  DerivedFeatures derived({{"log_fare", "log1p(fare)"}}, "data.derived");
  Json specs = {{"log_fare", {{"type", "numeric"}, {"normalize", "zscore"}}}};
  FeatureColumns columns = fitted_with(derived, specs, {"log_fare"});
  Json saved = columns.preprocessing();
  EXPECT_EQ(saved["derived"], Json({{"log_fare", "log1p(fare)"}}));
  auto again = FeatureColumns::from_preprocessing(saved);
  EXPECT_EQ(again->derived().json(), derived.json());
  // A served record brings fare; log_fare is computed from it.
  EXPECT_THAT(again->raw_features(), ElementsAre("fare"));
  EXPECT_THAT(again->derived_inputs().names(), ElementsAre("log_fare"));
  // A run resumed with another expression is refused, naming data.derived.
  FeatureColumns changed(testing::declared_columns(specs), {"log_fare"}, "data.train.input",
                         "data.columns", DerivedFeatures({{"log_fare", "log(fare)"}}, "d"));
  EXPECT_THAT([&] { changed.restore(saved); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr(
                  "data.derived: differs from the derived features the run was fitted with")));
  // Without derived features, preprocessing.json is as before.
  FeatureColumns plain =
      fitted_with(DerivedFeatures(), {{"fare", {{"type", "numeric"}}}}, {"fare"});
  EXPECT_FALSE(plain.preprocessing().contains("derived"));
}

// docs/tabular.md's own `fare: "clip(fare, 0, 500)"` replaces the raw fare: an export's JSON,
// REST and gRPC input then refused the raw fare a client must send, and its metadata left it out.
TEST(DerivedFeatures, ADerivedFeatureThatReplacesARawOneKeepsTheRawOneAsAnInput) {
  DerivedFeatures clipped({{"fare", "clip(fare, 0, 500)"}, {"double", "fare * 2"}}, "d");
  EXPECT_THAT(clipped.features(), ElementsAre("fare"));  // read above its own derivation
  Json specs = {{"fare", {{"type", "numeric"}}}, {"double", {{"type", "numeric"}}}};
  FeatureColumns columns = fitted_with(clipped, specs, {"fare", "double"}, 900);
  EXPECT_THAT(columns.raw_features(), ElementsAre("fare"));
  auto again = FeatureColumns::from_preprocessing(columns.preprocessing());
  EXPECT_THAT(again->raw_features(), ElementsAre("fare"));
}

// A preprocessing.json of 100,000 derived features took 24-101 s to open: every pass over them
// searched a list for each name. Each pass is hashed now (the bound leaves room for a sanitizer
// build on a busy machine; the quadratic passes took minutes).
TEST(DerivedFeatures, AHundredThousandOfThemOpenInLinearTime) {
  DerivedFeatures derived({{"log_fare", "log1p(fare)"}}, "data.derived");
  Json specs = {{"log_fare", {{"type", "numeric"}, {"normalize", "zscore"}}}};
  Json saved = fitted_with(derived, specs, {"log_fare"}).preprocessing();
  Json many = Json::object();
  for (int i = 0; i < 100000; ++i) append_new_key(many, "d" + std::to_string(i), "fare + 1");
  append_new_key(many, "log_fare", "log1p(fare)");
  saved["derived"] = many;
  auto start = std::chrono::steady_clock::now();
  auto opened = FeatureColumns::from_preprocessing(saved);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_THAT(opened->derived_inputs().names(), ElementsAre("log_fare"));
  EXPECT_THAT(opened->raw_features(), ElementsAre("fare"));
  Json twice = many;  // a name twice is refused where it is named
  append_new_key(twice, "d7", "fare");
  EXPECT_THAT(
      [&] { DerivedFeatures::from_json(twice, "p"); },
      ::testing::ThrowsMessage<ConfigError>(HasSubstr("the derived feature is named twice")));
}

}  // namespace derived_features_test
}  // namespace kiln::tabular
