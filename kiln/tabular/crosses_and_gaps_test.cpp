// Crosses of bucketized and categorical columns, the gaps each column type can fill, and a
// feature that no training record has, or has no value of (warned of, not refused).

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_columns.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace crosses_and_gaps_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using Rows = kiln::testing::TabularRows;
using kiln::testing::declared_columns;
using kiln::testing::fitted_columns;
using kiln::testing::row_written;

// Where a one-hot row has its 1s.
std::vector<int64_t> ones(const std::vector<float>& row, size_t from, size_t width) {
  std::vector<int64_t> at;
  for (size_t i = from; i < from + width; ++i)
    if (row[i] == 1.0f) at.push_back(int64_t(i - from));
  return at;
}

io::Features place(float lat, float lon) {
  return {{"lat", io::float_feature({lat})}, {"lon", io::float_feature({lon})}};
}

// TensorFlow's idiom: bucketize latitude and longitude, cross the buckets.
const Json kGrid = {
    {"lat_b", {{"type", "bucketize"}, {"feature", "lat"}, {"boundaries", {0}}}},
    {"lon_b", {{"type", "bucketize"}, {"feature", "lon"}, {"quantiles", 2}}},
    {"grid", {{"type", "crossed"}, {"features", {"lat_b", "lon_b"}}, {"hash_buckets", 64}}}};

TEST(CrossedColumn, CrossesTheBucketNumbersOfBucketizedColumns) {
  Rows rows({place(-1, 1), place(1, 2), place(-2, 3), place(2, 4)});
  FeatureColumns c = fitted_columns(kGrid, {"lat_b", "lon_b", "grid"}, rows);
  // lon's median is 2.5: bucket 0 below it, 1 from it. The cross of buckets (i, j) is the key
  // "i_X_j", as TensorFlow crosses bucket ids.
  auto cell = [](int lat, int lon) {
    return int64_t(stable_hash(std::to_string(lat) + "_X_" + std::to_string(lon)) % 64);
  };
  EXPECT_THAT(ones(row_written(c, place(-1, 1)), 4, 64), ElementsAre(cell(0, 0)));
  EXPECT_THAT(ones(row_written(c, place(5, 1)), 4, 64), ElementsAre(cell(1, 0)));
  EXPECT_THAT(ones(row_written(c, place(5, 9)), 4, 64), ElementsAre(cell(1, 1)));
  EXPECT_NE(cell(1, 0), cell(1, 1));
  EXPECT_THAT(c.features(), ElementsAre("lat", "lon"));
  // An export rebuilds the cross from preprocessing.json alone.
  auto again = FeatureColumns::from_preprocessing(c.preprocessing());
  EXPECT_EQ(row_written(*again, place(5, 9)), row_written(c, place(5, 9)));
}

// An embedding of a cross (tf.feature_column.embedding_column over a crossed_column): the
// combination's bucket as an index, -1 (embeds to zeros) when a crossed value is missing.
TEST(CrossedColumn, GivesItsBucketAsAnIndexForAnEmbedding) {
  Json specs = kGrid;
  specs["grid"]["output"] = "index";
  specs["grid"]["embedding_dim"] = 4;
  Rows rows({place(-1, 1), place(1, 2), place(-2, 3), place(2, 4)});
  FeatureColumns c = fitted_columns(specs, {"lat_b", "lon_b", "grid"}, rows);
  EXPECT_EQ(c.width(), 2 + 2 + 1);
  int64_t cell = int64_t(stable_hash("1_X_1") % 64);
  EXPECT_EQ(row_written(c, place(5, 9))[4], float(cell));
  ASSERT_EQ(c.layout().indices.size(), 1u);
  EXPECT_EQ(c.layout().indices[0].column, "grid");
  EXPECT_EQ(c.layout().indices[0].position, 4);
  EXPECT_EQ(c.layout().indices[0].cardinality, 64);
  EXPECT_EQ(c.layout().indices[0].embedding_dim, 4);
  // A raw cross of a missing feature: no combination, index -1.
  Json raw = {
      {"ab",
       {{"type", "crossed"}, {"features", {"a", "b"}}, {"hash_buckets", 8}, {"output", "index"}}}};
  Rows letters({{{"a", io::bytes_feature({"x"})}, {"b", io::bytes_feature({"y"})}}});
  FeatureColumns crossed = fitted_columns(raw, {"ab"}, letters);
  EXPECT_EQ(row_written(crossed, {{"a", io::bytes_feature({"x"})}})[0], -1.0f);
  EXPECT_THAT(
      [&] {
        row_written(crossed,
                    {{"a", io::bytes_feature({"x", "z"})}, {"b", io::bytes_feature({"y"})}});
      },
      ThrowsMessage<DataError>(HasSubstr("the cross of a, b has 2 combinations")));
  // An embedding width needs an index.
  raw["ab"].erase("output");
  raw["ab"]["embedding_dim"] = 3;
  EXPECT_THAT([&] { fitted_columns(raw, {"ab"}, letters); },
              ThrowsMessage<ConfigError>(HasSubstr("give output: index")));
}

// Two features of 125,000 values each in one served example would have crossed into 1.5e10 keys:
// the combinations are counted before any is made.
TEST(CrossedColumn, AnExampleOfTooManyCombinationsIsRefusedBeforeTheyAreMade) {
  Json raw = {{"ab", {{"type", "crossed"}, {"features", {"a", "b"}}, {"hash_buckets", 8}}}};
  Rows letters({{{"a", io::bytes_feature({"x"})}, {"b", io::bytes_feature({"y"})}}});
  FeatureColumns crossed = fitted_columns(raw, {"ab"}, letters);
  std::vector<std::string> many;
  for (int i = 0; i < 125000; ++i) many.push_back("v" + std::to_string(i));
  io::Features wide = {{"a", io::bytes_feature(many)}, {"b", io::bytes_feature(many)}};
  EXPECT_THAT([&] { row_written(crossed, wide); },
              ThrowsMessage<DataError>(HasSubstr("has more than 65536 combinations")));
  io::Features fits = {{"a", io::bytes_feature({"x", "z"})}, {"b", io::bytes_feature({"y"})}};
  EXPECT_FALSE(ones(row_written(crossed, fits), 0, 8).empty());
}

// A campaign's find: an export's cross edited to name one feature 100 times was served without a
// word. A name twice adds nothing; more than 32 make combinations no two records share.
TEST(CrossedColumn, ACrossOfOneNameTwiceOrOfTooManyIsRefused) {
  Rows letters({{{"a", io::bytes_feature({"x"})}, {"b", io::bytes_feature({"y"})}}});
  auto cross_of = [&](const std::vector<std::string>& features) {
    Json raw = {{"ab", {{"type", "crossed"}, {"features", features}, {"hash_buckets", 8}}}};
    fitted_columns(raw, {"ab"}, letters);
  };
  EXPECT_THAT(
      [&] {
        cross_of({"a", "b", "a"});
      },
      ThrowsMessage<ConfigError>(HasSubstr("with no name twice")));
  std::vector<std::string> many;
  for (int i = 0; i < 33; ++i) many.push_back("f" + std::to_string(i));
  EXPECT_THAT([&] { cross_of(many); }, ThrowsMessage<ConfigError>(HasSubstr("of at most 32")));
  EXPECT_NO_THROW(cross_of({"a", "b"}));
}

// A campaign's find: an export's cross edited to name a feature training never read (or the
// cross itself) served rows the model never saw. preprocessing.json lists the features fitted on.
TEST(CrossedColumn, ACrossEditedToNameAFeatureTheColumnsWereNotFittedOnIsRefused) {
  Rows rows({place(-1, 1), place(1, 2), place(-2, 3), place(2, 4)});
  Json saved = fitted_columns(kGrid, {"lat_b", "lon_b", "grid"}, rows).preprocessing();
  EXPECT_EQ(saved["features"], Json::array({"lat", "lon"}));
  for (const char* name : {"nope", "grid"}) {
    Json edited = saved;
    edited["columns"][2]["spec"]["features"][0] = name;
    try {
      FeatureColumns::from_preprocessing(edited);
      FAIL() << name;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format(
                                "column \"grid\" reads the feature \"{}\", which is not one of "
                                "the features its columns were fitted on: [\"lat\",\"lon\"]",
                                name)));
    }
  }
  Json older = saved;
  older.erase("features");  // a version 1 file may be written before the list was
  EXPECT_THROW(FeatureColumns::from_preprocessing(older), ConfigError);
  older["version"] = 1;
  EXPECT_NO_THROW(FeatureColumns::from_preprocessing(older));
  Json listed_more = saved;
  listed_more["features"].push_back("other");
  EXPECT_THROW(FeatureColumns::from_preprocessing(listed_more), ConfigError);
}

TEST(CrossedColumn, CrossesACategoricalColumnsFeatureWithItsFill) {
  Json specs = {
      {"kind", {{"type", "categorical"}, {"feature", "k"}, {"missing", "value"}, {"value", "?"}}},
      {"x", {{"type", "crossed"}, {"features", {"kind", "raw"}}, {"hash_buckets", 32}}}};
  Rows rows({{{"k", io::bytes_feature({"a"})}, {"raw", io::int64_feature({7})}},
             {{"k", io::Feature{}}, {"raw", io::int64_feature({7})}}});
  FeatureColumns c = fitted_columns(specs, {"kind", "x"}, rows);
  size_t kind_width = size_t(c.width() - 32);
  EXPECT_THAT(ones(row_written(c, rows[0]), kind_width, 32),
              ElementsAre(int64_t(stable_hash("a_X_7") % 32)));
  EXPECT_THAT(ones(row_written(c, rows[1]), kind_width, 32),
              ElementsAre(int64_t(stable_hash("?_X_7") % 32)));
}

TEST(CategoricalColumn, AGapTakesTheGivenValueOrTheMode) {
  Rows rows({{{"c", io::bytes_feature({"b"})}},
             {{"c", io::bytes_feature({"a"})}},
             {{"c", io::bytes_feature({"a"})}},
             {{"c", io::Feature{}}},
             {}});
  io::Features gap = {{"c", io::Feature{}}};
  // missing: value, counted in the computed vocabulary like any category (twice: rows 3 and 4).
  FeatureColumns given = fitted_columns(
      {{"c", {{"type", "categorical"}, {"missing", "value"}, {"value", "?"}, {"output", "index"}}}},
      {"c"}, rows);
  Json fitted_value = given.preprocessing()["columns"][0]["fitted"];
  EXPECT_EQ(fitted_value["vocabulary"], Json({"?", "a", "b"}));
  EXPECT_THAT(row_written(given, gap), ElementsAre(0));
  // missing: mode: the most frequent value, kept in preprocessing.json.
  FeatureColumns mode = fitted_columns(
      {{"c", {{"type", "categorical"}, {"missing", "mode"}, {"vocabulary", {"a", "b"}}}}}, {"c"},
      rows);
  EXPECT_EQ(mode.preprocessing()["columns"][0]["fitted"]["missing"], "a");
  EXPECT_THAT(row_written(mode, gap), ElementsAre(1, 0, 0));
  auto again = FeatureColumns::from_preprocessing(mode.preprocessing());
  EXPECT_THAT(row_written(*again, gap), ElementsAre(1, 0, 0));
  // Without missing: an index still refuses a gap, and says how to fill it.
  FeatureColumns none =
      fitted_columns({{"c", {{"type", "categorical"}, {"output", "index"}}}}, {"c"}, rows);
  EXPECT_THAT([&] { row_written(none, gap); },
              ThrowsMessage<DataError>(HasSubstr("missing: value, mode or bucket")));
  EXPECT_THAT(
      [] {
        FeatureColumns(declared_columns({{"c", {{"type", "categorical"}, {"missing", "value"}}}}),
                       {"c"}, "data.train.input", "data.columns");
      },
      ThrowsMessage<ConfigError>(
          AllOf(HasSubstr("data.columns.c.value"), HasSubstr("give value: TEXT"))));
  EXPECT_THAT(
      [] {
        declared_columns({{"c", {{"type", "categorical"}, {"missing", "often"}}}});
      },
      ThrowsMessage<ConfigError>(AllOf(HasSubstr("data.columns.c.missing"), HasSubstr("mode"))));
}

TEST(BucketizeColumn, AGapTakesTheTrainingMeanOrMedian) {
  Rows rows({{{"x", io::float_feature({1})}},
             {{"x", io::float_feature({2})}},
             {{"x", io::float_feature({3})}},
             {{"x", io::float_feature({10})}},
             {}});
  auto with = [&](const Json& missing) {
    return fitted_columns(
        {{"x", {{"type", "bucketize"}, {"boundaries", {3, 5}}, {"missing", missing}}}}, {"x"},
        rows);
  };
  FeatureColumns mean = with("mean"), median = with("median"), given = with(7);
  EXPECT_EQ(mean.preprocessing()["columns"][0]["fitted"]["missing"], 4.0);
  EXPECT_EQ(median.preprocessing()["columns"][0]["fitted"]["missing"], 2.5);
  EXPECT_THAT(row_written(mean, {}), ElementsAre(0, 1, 0));
  EXPECT_THAT(row_written(median, {}), ElementsAre(1, 0, 0));
  EXPECT_THAT(row_written(given, {}), ElementsAre(0, 0, 1));
  auto again = FeatureColumns::from_preprocessing(mean.preprocessing());
  EXPECT_THAT(row_written(*again, {}), ElementsAre(0, 1, 0));
  EXPECT_THAT(
      [] {
        declared_columns({{"x", {{"type", "bucketize"}, {"boundaries", {0}}, {"missing", "avg"}}}});
      },
      ThrowsMessage<ConfigError>(
          AllOf(HasSubstr("data.columns.x.missing"), HasSubstr("mean, median"))));
}

// A feature no training record holds is missing in every record (tf.Example leaves missing
// values out) or misspelt: a warning at the key that names it, with the nearest name the
// records have, and its column fits as one that sees no value.
TEST(FeatureColumns, AFeatureNoRecordHasIsAWarningAtTheKeyNamingIt) {
  Rows rows({{{"color", io::bytes_feature({"red"})}, {"size", io::float_feature({1})}},
             {{"color", io::Feature{}}, {"size", io::float_feature({2})}}});
  auto warnings = [&](const Json& specs, std::vector<std::string> input) {
    return fitted_columns(specs, input, rows).warnings();
  };
  EXPECT_THAT(warnings({{"c", {{"type", "categorical"}, {"feature", "colr"}}}}, {"c"}),
              ElementsAre(AllOf(HasSubstr("data.columns.c.feature: no training record has a "
                                          "feature \"colr\" (did you mean \"color\"?)"),
                                HasSubstr("the first record's features are: color, size")),
                          HasSubstr("data.columns.c: no training record has a value of \"colr\": "
                                    "its vocabulary is empty")));
  EXPECT_THAT(
      warnings({{"x", {{"type", "crossed"}, {"features", {"color", "sise"}}, {"hash_buckets", 8}}}},
               {"x"}),
      ElementsAre(AllOf(HasSubstr("data.columns.x.features"), HasSubstr("\"sise\""))));
  EXPECT_THAT(warnings({}, {"size", "weight"}),
              ElementsAre(AllOf(HasSubstr("data.train.input[1]"), HasSubstr("\"weight\""))));
  EXPECT_TRUE(warnings({}, {"size"}).empty());
}

// A feature with no value in any training record (a CSV column of empty cells, a tf.Example
// feature always left out) trains: an empty vocabulary, no normalization, one bucket; each said.
TEST(FeatureColumns, AFeatureMissingInEveryRecordFitsEmptyWithAWarning) {
  Rows rows({{{"gone", io::Feature{}}, {"size", io::float_feature({1})}},
             {{"gone", io::Feature{}}, {"size", io::float_feature({2})}}});
  Json specs = {
      {"cat", {{"type", "categorical"}, {"feature", "gone"}, {"missing", "mode"}}},
      {"num",
       {{"type", "numeric"}, {"feature", "gone"}, {"normalize", "zscore"}, {"missing", "mean"}}},
      {"bucket",
       {{"type", "bucketize"}, {"feature", "gone"}, {"quantiles", 4}, {"missing", "median"}}}};
  FeatureColumns c = fitted_columns(specs, {"cat", "num", "bucket"}, rows);
  EXPECT_THAT(
      c.warnings(),
      ElementsAre(HasSubstr("data.columns.cat: no training record has a value of \"gone\": "
                            "its vocabulary is empty, every value goes to an "
                            "out-of-vocabulary bucket, and a missing value has no mode"),
                  HasSubstr("data.columns.num: no training record has a value of "
                            "\"gone\": it is not normalized, and a missing value is 0"),
                  HasSubstr("data.columns.bucket: no training record has a value of "
                            "\"gone\": one bucket, no quantiles, and a missing value is 0")));
  EXPECT_EQ(c.width(), 1 + 1 + 1);  // the OOV bucket, the number, the one bucket
  EXPECT_EQ(row_written(c, {{"size", io::float_feature({1})}}),
            (std::vector<float>{0, 0, 1}));  // no category, 0, the bucket of the fill
  // A value served later: category "7" in the OOV bucket, the number as it is, the one bucket.
  EXPECT_EQ(row_written(c, {{"gone", io::float_feature({7})}}), (std::vector<float>{1, 7, 1}));
  // Served from preprocessing.json, it writes the same.
  auto again = FeatureColumns::from_preprocessing(c.preprocessing());
  EXPECT_EQ(row_written(*again, {{"size", io::float_feature({1})}}), (std::vector<float>{0, 0, 1}));
  // An index with nothing to index is still refused: no model could look it up.
  Json index = {{"cat", {{"type", "categorical"}, {"feature", "gone"}, {"output", "index"}}}};
  EXPECT_THAT([&] { fitted_columns(index, {"cat"}, rows); },
              ThrowsMessage<ConfigError>(HasSubstr("no training record has a value of \"gone\"")));
}

}  // namespace crosses_and_gaps_test
}  // namespace kiln::tabular
