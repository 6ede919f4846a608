// The raw features' kinds and counts, seen in the fitting pass and kept in preprocessing.json:
// what a served tabular model lists as its inputs.

#include "kiln/tabular/raw_feature_types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_columns.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace raw_feature_types_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using Kind = io::Feature::Kind;

TEST(RawFeatureTypes, KindsAndCountsComeFromTheRecordsThatHoldAValue) {
  RawFeatureTypes types({"fare", "company", "trips", "grid", "gone"});
  types.observe({{"fare", io::int64_feature({3})},
                 {"company", io::bytes_feature({"Flash"})},
                 {"trips", io::int64_feature({1})},
                 {"grid", io::float_feature({1, 2})}});
  RawFeatureTypes later({"fare", "company", "trips", "grid", "gone"});
  later.observe({{"fare", io::float_feature({3.5})},
                 {"trips", io::int64_feature({})},  // held without a value: missing
                 {"grid", io::float_feature({1, 2, 3})},
                 {"gone", io::float_feature({})}});
  types.merge(later);
  std::map<std::string, RawFeatureType> seen = types.types();
  ASSERT_EQ(seen.size(), 4u);  // "gone" never held a value: nothing says what it is
  EXPECT_EQ(seen["fare"], (RawFeatureType{Kind::kFloat, 1}));  // ints and floats: floats
  EXPECT_EQ(seen["company"], (RawFeatureType{Kind::kBytes, 1}));
  EXPECT_EQ(seen["trips"], (RawFeatureType{Kind::kInt64, 1}));
  EXPECT_EQ(seen["grid"], (RawFeatureType{Kind::kFloat, RawFeatureType::kVaries}));
  EXPECT_EQ(types.json()["grid"], (Json{{"kind", "float_list"}, {"values", -1}}));
}

TEST(RawFeatureTypes, ReadBackAsWrittenAndADamagedOneIsNamed) {
  std::vector<std::string> names = {"fare", "grid"};
  RawFeatureTypes types(names);
  types.observe({{"fare", io::float_feature({1})}, {"grid", io::int64_feature({1, 2, 3})}});
  RawFeatureTypes read = RawFeatureTypes::from_json(types.json(), names, "p:raw_features");
  EXPECT_EQ(read.types(), types.types());
  EXPECT_EQ(read.json(), types.json());
  Json varies = {{"fare", {{"kind", "unseen"}}},
                 {"grid", {{"kind", "int64_list"}, {"values", -1}}}};
  EXPECT_EQ(RawFeatureTypes::from_json(varies, names, "p").json(), varies);
  EXPECT_EQ(RawFeatureTypes(names).json(),
            (Json{{"fare", {{"kind", "unseen"}}}, {"grid", {{"kind", "unseen"}}}}))
      << "a feature no record had is written all the same";

  auto refused = [&](const Json& json, const char* why) {
    EXPECT_THAT([&] { RawFeatureTypes::from_json(json, names, "p:raw_features"); },
                ThrowsMessage<ConfigError>(HasSubstr(why)))
        << json.dump();
  };
  refused(Json::array(), "expected an object");
  // An entry taken out of the file took its kind with it, in silence: each must be there.
  refused({{"fare", {{"kind", "float_list"}, {"values", 1}}}}, "\"grid\" is missing");
  refused({{"tips", {{"kind", "float_list"}, {"values", 1}}}},
          "\"tips\" is no raw feature the columns read (fare, grid)");
  refused({{"fare", {{"kind", "double_list"}, {"values", 1}}}}, "\"kind\" is bytes_list");
  refused({{"fare", 3}}, "\"kind\" is bytes_list");
  for (Json values : {Json(0), Json(-2), Json(1.5), Json("1"), Json(int64_t{1} << 40)})
    refused({{"fare", {{"kind", "float_list"}, {"values", values}}}}, "\"values\" is a count");
  EXPECT_THAT([&] { RawFeatureTypes::from_json(Json::array(), names, "p:raw_features"); },
              ThrowsMessage<ConfigError>(HasSubstr("p:raw_features")));
}

TEST(RawFeatureTypes, FittedColumnsKeepThemInPreprocessingJson) {
  testing::TabularRows rows(
      {{{"fare", io::float_feature({12.5})},
        {"company", io::bytes_feature({"Flash"})},
        {"tips", io::float_feature({2})}},
       {{"fare", io::float_feature({3})}, {"company", io::bytes_feature({})}}});
  FeatureColumns columns(
      testing::declared_columns({{"company", {{"type", "categorical"}, {"feature", "company"}}}}),
      {"fare", "company", "log_fare"}, "data.train.input", "data.columns",
      DerivedFeatures({{"log_fare", "log1p(fare)"}}, "data.derived"));
  columns.fit(rows, 1);
  Json saved = columns.preprocessing();
  EXPECT_EQ(saved["raw_features"], (Json{{"company", {{"kind", "bytes_list"}, {"values", 1}}},
                                         {"fare", {{"kind", "float_list"}, {"values", 1}}}}));
  Json missing = saved;
  missing["raw_features"].erase("company");
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(missing); },
              ThrowsMessage<ConfigError>(HasSubstr("\"company\" is missing")));
  Json unknown_key = saved;
  unknown_key["colums"] = Json::array();
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(unknown_key); },
              ThrowsMessage<ConfigError>(HasSubstr("\"colums\" is no key of")));
  std::unique_ptr<FeatureColumns> restored = FeatureColumns::from_preprocessing(saved);
  EXPECT_EQ(restored->raw_types().types(), columns.raw_types().types());
  // A numeric feature declared bytes_list loaded, and its metadata told clients to send strings
  // the column then refused: each kind is tried on the columns that read it.
  Json strings = saved;
  strings["raw_features"]["fare"]["kind"] = "bytes_list";
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(strings); },
              ThrowsMessage<ConfigError>(AllOf(HasSubstr("preprocessing.json:raw_features"),
                                               HasSubstr("not what column \"fare\" reads"))));
  // A kind the column would read too, but not the one training saw: the vocabulary fitted from
  // the records says which (a campaign's find: metadata told clients to send DT_FLOAT).
  for (const char* kind : {"int64_list", "float_list"}) {
    Json numbers = saved;
    numbers["raw_features"]["company"]["kind"] = kind;
    EXPECT_THAT([&] { FeatureColumns::from_preprocessing(numbers); },
                ThrowsMessage<ConfigError>(
                    HasSubstr(fmt::format("\"company\" is said to be {}, but column \"company\" "
                                          "says it was not: its vocabulary, fitted from the "
                                          "training records, holds \"Flash\", which no number is",
                                          kind))));
    // Categories may come as whole numbers, as TensorFlow takes them: then the words are numbers.
    numbers["columns"][1]["fitted"]["vocabulary"] = {"-3"};
    EXPECT_NO_THROW(FeatureColumns::from_preprocessing(numbers));
    numbers["columns"][1]["fitted"]["vocabulary"] = {"03"};
    EXPECT_THROW(FeatureColumns::from_preprocessing(numbers), ConfigError);
  }
  // Said unseen, its vocabulary fitted from values all the same (a campaign's find: the
  // feature went from the metadata, and gRPC clients sending it were refused).
  Json unseen = saved;
  unseen["raw_features"]["company"] = {{"kind", "unseen"}};
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(unseen); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "\"company\" is said to be unseen, but column \"company\" says it was not: "
                  "its vocabulary of 1 word was fitted from the training records' values")));
  Json extra = saved;  // a key read by nobody, in an entry
  extra["raw_features"]["fare"]["unit"] = "USD";
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(extra); },
              ThrowsMessage<ConfigError>(HasSubstr("\"fare\": \"unit\" is no key")));
  extra = saved;
  extra["raw_features"]["fare"] = {{"kind", "unseen"}, {"values", 1}};
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(extra); },
              ThrowsMessage<ConfigError>(HasSubstr("\"values\" is no key")));

  // Taken out whole: a version 2 file always has them; one of version 1 was written before
  // kiln noted them, and nothing is known.
  saved.erase("raw_features");
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(saved); },
              ThrowsMessage<ConfigError>(HasSubstr("its \"raw_features\" is missing")));
  saved["version"] = 1;
  EXPECT_TRUE(FeatureColumns::from_preprocessing(saved)->raw_types().types().empty());
  saved["raw_features"] = {{"log_fare", {{"kind", "float_list"}, {"values", 1}}},
                           {"fare", {{"kind", "unseen"}}},
                           {"company", {{"kind", "unseen"}}}};
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(saved); },
              ThrowsMessage<ConfigError>(HasSubstr("\"log_fare\" is no raw feature")));
}

// Said unseen, a column's statistics fitted from values say otherwise: a numeric column's shift,
// scale and fill (from nothing: 0, 1 and 0), a bucketized one's quantiles.
TEST(RawFeatureTypes, AFeatureSaidUnseenWhoseStatisticsWereFittedIsRefused) {
  testing::TabularRows rows(
      {{{"fare", io::float_feature({12.5})}, {"tips", io::float_feature({2})}},
       {{"fare", io::float_feature({3})}, {"tips", io::float_feature({5})}}});
  FeatureColumns columns(
      testing::declared_columns({{"fare", {{"type", "numeric"}, {"normalize", "zscore"}}},
                                 {"tips", {{"type", "bucketize"}, {"quantiles", 2}}}}),
      {"fare", "tips"}, "data.train.input", "data.columns");
  columns.fit(rows, 1);
  Json saved = columns.preprocessing();
  EXPECT_NO_THROW(FeatureColumns::from_preprocessing(saved));
  for (const char* feature : {"fare", "tips"}) {
    Json unseen = saved;
    unseen["raw_features"][feature] = {{"kind", "unseen"}};
    EXPECT_THAT([&] { FeatureColumns::from_preprocessing(unseen); },
                ThrowsMessage<ConfigError>(HasSubstr("were fitted from the training records' "
                                                     "values")))
        << feature;
  }
}

}  // namespace raw_feature_types_test
}  // namespace kiln::tabular
