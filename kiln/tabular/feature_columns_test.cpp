#include "kiln/tabular/feature_columns.h"

#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "kiln/core/error.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;

using Rows = kiln::testing::TabularRows;
using kiln::testing::declared_columns;
using kiln::testing::fitted_columns;
using kiln::testing::row_written;

io::Features number(const std::string& name, float value) {
  return {{name, io::float_feature({value})}};
}

Rows numbers(const std::string& name, std::vector<float> values) {
  std::vector<io::Features> rows;
  for (float v : values) rows.push_back(number(name, v));
  return Rows(rows);
}

TEST(NumericColumn, ZscoreUsesTheTrainingMeanAndPopulationStd) {
  Rows rows = numbers("x", {1, 2, 3, 4});
  FeatureColumns c =
      fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}}, {"x"}, rows);
  EXPECT_THAT(row_written(c, number("x", 1)), ElementsAre(FloatNear(-1.3416408f, 1e-6f)));
  EXPECT_THAT(row_written(c, number("x", 2.5f)), ElementsAre(FloatNear(0, 1e-6f)));
}

TEST(NumericColumn, MinmaxAfterClipAndLog) {
  Rows rows = numbers("x", {0, 3, 1000});
  FeatureColumns c = fitted_columns(
      {{"x", {{"type", "numeric"}, {"normalize", "minmax"}, {"log", true}, {"clip", {0, 15}}}}},
      {"x"}, rows);
  // log1p(clip(x)) spans [0, log 16]; 3 -> log 4, half of it.
  EXPECT_THAT(row_written(c, number("x", 3)), ElementsAre(FloatNear(0.5f, 1e-6f)));
  EXPECT_THAT(row_written(c, number("x", 1e6f)), ElementsAre(FloatNear(1.0f, 1e-6f)));
}

TEST(NumericColumn, AConstantFeatureIsShiftedNotDividedByZero) {
  Rows rows = numbers("x", {5, 5});
  FeatureColumns c =
      fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}}, {"x"}, rows);
  EXPECT_THAT(row_written(c, number("x", 6)), ElementsAre(1.0f));
}

TEST(NumericColumn, MissingValuesFollowThePolicy) {
  Rows rows = numbers("x", {2, 4});
  FeatureColumns mean =
      fitted_columns({{"x", {{"type", "numeric"}, {"missing", "mean"}}}}, {"x"}, rows);
  EXPECT_THAT(row_written(mean, {}), ElementsAre(3.0f));
  FeatureColumns value = fitted_columns(
      {{"x", {{"type", "numeric"}, {"missing", "value"}, {"value", -1}}}}, {"x"}, rows);
  EXPECT_THAT(row_written(value, {{"x", io::Feature{}}}), ElementsAre(-1.0f));
  FeatureColumns fail = fitted_columns({{"x", "numeric"}}, {"x"}, rows);
  try {
    row_written(fail, {});
    FAIL() << "a missing feature with missing: fail was accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.tfrecord"));
    EXPECT_THAT(e.what(), HasSubstr("feature \"x\" is missing"));
    EXPECT_THAT(e.what(), HasSubstr("missing: mean"));
  }
}

TEST(NumericColumn, AStringOrAWrongCountIsADataErrorNamingTheFeature) {
  FeatureColumns c = fitted_columns({}, {"x"}, numbers("x", {1}));
  EXPECT_THAT(
      [&] {
        row_written(c, {{"x", io::bytes_feature({"7"})}});
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("make it a categorical column")));
  EXPECT_THAT(
      [&] {
        row_written(c, {{"x", io::float_feature({1, 2})}});
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("has 2 values; the column's shape is 1")));
}

// Served rows once answered NaN (class "in") for an infinity: refused as training refuses it.
TEST(NumericColumn, InfinityAndNaNAreDataErrorsNamingTheRecordAndFeature) {
  FeatureColumns c = fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}}, {"x"},
                                    numbers("x", {1, 2, 3}));
  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()})
    EXPECT_THAT([&] { row_written(c, number("x", bad)); },
                ::testing::ThrowsMessage<DataError>(
                    AllOf(HasSubstr("x.tfrecord, record 7, byte offset 70"),
                          HasSubstr("feature \"x\" holds"), HasSubstr("finite float32"))));
  // A finite value whose normalization leaves float32 is refused too.
  FeatureColumns tiny = fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}},
                                       {"x"}, numbers("x", {0, 1e-30f}));
  EXPECT_THAT([&] { row_written(tiny, number("x", 3e38f)); },
              ::testing::ThrowsMessage<DataError>(HasSubstr("beyond float32")));
  EXPECT_THAT(
      [&] {
        fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}}, {"x"},
                       numbers("x", {1, std::numeric_limits<float>::infinity()}));
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("holds inf")));
}

TEST(BucketizeColumn, AValueOnAnEdgeGoesToTheBucketAbove) {
  FeatureColumns c = fitted_columns({{"x", {{"type", "bucketize"}, {"boundaries", {0, 10}}}}},
                                    {"x"}, numbers("x", {1}));
  EXPECT_THAT(row_written(c, number("x", -5)), ElementsAre(1, 0, 0));
  EXPECT_THAT(row_written(c, number("x", 0)), ElementsAre(0, 1, 0));
  EXPECT_THAT(row_written(c, number("x", 10)), ElementsAre(0, 0, 1));
}

TEST(BucketizeColumn, QuantileEdgesAreNumpysLinearQuantiles) {
  Rows rows = numbers("x", {10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  FeatureColumns c = fitted_columns(
      {{"x", {{"type", "bucketize"}, {"quantiles", 4}, {"output", "index"}}}}, {"x"}, rows);
  // numpy.quantile(range(1, 11), [.25, .5, .75]) = [3.25, 5.5, 7.75]
  EXPECT_EQ(c.preprocessing()["columns"][0]["fitted"]["boundaries"], Json({3.25, 5.5, 7.75}));
  EXPECT_THAT(row_written(c, number("x", 5.5f)), ElementsAre(2));
}

io::Features category(const std::string& name, std::vector<std::string> values) {
  return {{name, io::bytes_feature(std::move(values))}};
}

TEST(CategoricalColumn, ComputedVocabularyIsByCountThenByteOrder) {
  Rows rows({category("c", {"b"}), category("c", {"a"}), category("c", {"z"}), category("c", {"z"}),
             category("c", {"q"})});
  FeatureColumns c =
      fitted_columns({{"c", {{"type", "categorical"}, {"num_oov_buckets", 2}}}}, {"c"}, rows);
  EXPECT_EQ(c.preprocessing()["columns"][0]["fitted"]["vocabulary"], Json({"z", "a", "b", "q"}));
  EXPECT_THAT(row_written(c, category("c", {"a"})), ElementsAre(0, 1, 0, 0, 0, 0));
  // Unseen: the vocabulary's size plus FNV-1a("zebra") % 2 = 4 + 1.
  EXPECT_THAT(row_written(c, category("c", {"zebra"})), ElementsAre(0, 0, 0, 0, 0, 1));
  EXPECT_EQ(c.unseen(), (std::map<std::string, int64_t>{{"c", 1}}));
  EXPECT_THAT(row_written(c, {}), ElementsAre(0, 0, 0, 0, 0, 0));
}

// The training split's count of values in no vocabulary grew with the validation carve's: the
// columns are shared, so each split counts what its own rows meet.
TEST(CategoricalColumn, EachReaderOfTheColumnsCountsItsOwnUnseenValues) {
  Rows rows({category("c", {"a"}), category("c", {"b"})});
  FeatureColumns c =
      fitted_columns({{"c", {{"type", "categorical"}, {"num_oov_buckets", 1}}}}, {"c"}, rows);
  UnseenCounts train, validation;
  {
    CountUnseenIn counting(train);
    row_written(c, category("c", {"zebra"}));
    {
      CountUnseenIn inner(validation);  // the innermost scope counts
      row_written(c, category("c", {"yak"}));
      row_written(c, category("c", {"okapi"}));
    }
    row_written(c, category("c", {"a"}));
  }
  row_written(c, category("c", {"gnu"}));  // outside any: the total only
  EXPECT_EQ(c.unseen(train), (std::map<std::string, int64_t>{{"c", 1}}));
  EXPECT_EQ(c.unseen(validation), (std::map<std::string, int64_t>{{"c", 2}}));
  EXPECT_EQ(c.unseen(), (std::map<std::string, int64_t>{{"c", 4}}));
}

// A computed vocabulary goes to preprocessing.json as text: a category that is not UTF-8 is
// refused there, naming the record; hashed, any bytes are a category.
TEST(CategoricalColumn, AComputedVocabularyRefusesBytesThatAreNotUtf8) {
  std::vector<io::Features> rows = {category("c", {"ok"}), category("c", {"caf\xe9"})};
  EXPECT_THAT(
      [&] {
        fitted_columns({{"c", {{"type", "categorical"}}}}, {"c"}, Rows(rows));
      },
      ::testing::ThrowsMessage<DataError>(
          HasSubstr("feature \"c\": the category holds byte 0xe9, which is not UTF-8")));
  FeatureColumns hashed =
      fitted_columns({{"c", {{"type", "categorical"}, {"hash_buckets", 4}}}}, {"c"}, Rows(rows));
  EXPECT_EQ(row_written(hashed, category("c", {"caf\xe9"})).size(), 4u);
}

TEST(CategoricalColumn, MinCountAndMaxTokensTrimTheVocabulary) {
  Rows rows({category("c", {"a", "a", "b", "c", "c", "c"})});
  FeatureColumns c = fitted_columns({{"c",
                                      {{"type", "categorical"},
                                       {"min_count", 2},
                                       {"max_tokens", 1},
                                       {"output", "multi_hot"},
                                       {"num_oov_buckets", 0}}}},
                                    {"c"}, rows);
  EXPECT_EQ(c.width(), 1);
  EXPECT_THAT(row_written(c, category("c", {"c", "b"})), ElementsAre(1));
}

TEST(CategoricalColumn, IntegersAreCategoriesAndListsNeedMultiHot) {
  Rows rows({{{"n", io::int64_feature({3})}}, {{"n", io::int64_feature({5})}}});
  FeatureColumns c =
      fitted_columns({{"n", {{"type", "categorical"}, {"output", "index"}}}}, {"n"}, rows);
  EXPECT_THAT(row_written(c, {{"n", io::int64_feature({5})}}), ElementsAre(1));
  EXPECT_THAT(
      [&] {
        row_written(c, {{"n", io::int64_feature({3, 5})}});
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("output: multi_hot")));
  // A whole number read as a float is that integer; a fraction is no category.
  EXPECT_THAT(row_written(c, {{"n", io::float_feature({5})}}), ElementsAre(1));
  EXPECT_THAT(
      [&] {
        row_written(c, {{"n", io::float_feature({3.5f})}});
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("the number 3.5 cannot be a category")));
  EXPECT_THAT(
      [&] {
        row_written(c, {{"n", io::float_feature({1e20f})}});
      },
      ::testing::ThrowsMessage<DataError>(HasSubstr("the number 1e+20 cannot be a category")));
}

TEST(CategoricalColumn, HashBucketsNeedNoFitting) {
  FeatureColumns c(declared_columns({{"c", {{"type", "categorical"}, {"hash_buckets", 3}}}}), {"c"},
                   "input", "data.columns");
  EXPECT_FALSE(c.needs_fitting());
  // FNV-1a("Dream") % 3 = 0
  EXPECT_THAT(row_written(c, category("c", {"Dream"})), ElementsAre(1, 0, 0));
}

TEST(CategoricalColumn, AnIndexCountsItsBucketsAndAsksForItsEmbedding) {
  Json index = {{"type", "categorical"},
                {"vocabulary", {"a", "b"}},
                {"num_oov_buckets", 2},
                {"output", "index"},
                {"embedding_dim", 4}};
  FeatureColumns c(declared_columns({{"c", index}}), {"c"}, "input", "data.columns");
  EXPECT_EQ(layout_json(c.layout())["indices"],
            Json::parse(R"([{"column": "c", "position": 0, "cardinality": 4,
                             "embedding_dim": 4}])"));
  EXPECT_THAT(row_written(c, category("c", {"b"})), ElementsAre(1));
  index["output"] = "one_hot";
  EXPECT_THAT(
      [&] {
        FeatureColumns(declared_columns({{"c", index}}), {"c"}, "input", "data.columns");
      },
      ::testing::ThrowsMessage<ConfigError>(
          AllOf(HasSubstr("data.columns.c.embedding_dim"), HasSubstr("output: index"))));
}

TEST(CrossedColumn, HashesTensorFlowsJoinedKey) {
  FeatureColumns c(
      declared_columns(
          {{"x", {{"type", "crossed"}, {"features", {"a", "b"}}, {"hash_buckets", 16}}}}),
      {"x"}, "input", "data.columns");
  io::Features features = {{"a", io::bytes_feature({"Gentoo"})},
                           {"b", io::bytes_feature({"Biscoe"})}};
  std::vector<float> row = row_written(c, features);
  std::vector<float> expected(16, 0.0f);
  expected[12] = 1;  // FNV-1a("Gentoo_X_Biscoe") % 16
  EXPECT_THAT(row, ElementsAreArray(expected));
  EXPECT_THAT(row_written(c, {{"a", io::bytes_feature({"Gentoo"})}}),
              ElementsAreArray(std::vector<float>(16, 0.0f)));
}

TEST(StableHash, IsFnv1a64) {
  EXPECT_EQ(stable_hash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(stable_hash("a"), 0xaf63dc4c8601ec8cull);
}

TEST(FeatureColumns, WriteTheInputsOrderAndPlainFeaturesAsNumbers) {
  Rows rows({{{"a", io::float_feature({2})}, {"c", io::bytes_feature({"u"})}}});
  FeatureColumns c = fitted_columns({{"c", "categorical"}}, {"c", "a"}, rows);
  EXPECT_EQ(c.width(), 3);
  EXPECT_THAT(c.names(), ElementsAre("c", "a"));
  EXPECT_THAT(row_written(c, rows[0]), ElementsAre(1, 0, 2));
  EXPECT_THAT(c.features(), ElementsAre("a", "c"));
}

TEST(FeatureColumns, ADeclaredColumnMissingFromTheInputIsAConfigError) {
  EXPECT_THAT(
      [] {
        FeatureColumns(declared_columns({{"b", "numeric"}}), {"a"}, "data.train.input",
                       "data.columns");
      },
      ::testing::ThrowsMessage<ConfigError>(HasSubstr("data.columns.b")));
  EXPECT_THAT(
      [] {
        FeatureColumns(declared_columns({}), {"a", "a"}, "data.train.input", "data.columns");
      },
      ::testing::ThrowsMessage<ConfigError>(HasSubstr("data.train.input[1]")));
}

InputGroups wide_and_deep(std::vector<std::string> wide, std::vector<std::string> deep) {
  InputGroups groups;
  groups.named = true;
  groups.groups = {{"wide", std::move(wide)}, {"deep", std::move(deep)}};
  return groups;
}

// c one-hot in the wide part; x and c's index (embedded in 3) in the deep part.
const Json kWideDeepColumns = {
    {"c", "categorical"},
    {"c_index",
     {{"type", "categorical"}, {"feature", "c"}, {"output", "index"}, {"embedding_dim", 3}}}};

TEST(FeatureColumns, NamedInputsAreConsecutivePartsOfTheRowWithTheirIndices) {
  Rows rows({{{"c", io::bytes_feature({"u"})}, {"x", io::float_feature({1})}},
             {{"c", io::bytes_feature({"v"})}, {"x", io::float_feature({2})}},
             {{"c", io::bytes_feature({"v"})}, {"x", io::float_feature({3})}}});
  FeatureColumns c(declared_columns(kWideDeepColumns), wide_and_deep({"c"}, {"x", "c_index"}),
                   "data.train.inputs", "data.columns");
  c.fit(rows, 1);
  // The vocabulary is [v, u] and one OOV bucket: the wide part is 3 wide, the deep one 2.
  EXPECT_EQ(layout_json(c.layout()),
            Json::parse(R"({"parts": [{"name": "wide", "offset": 0, "width": 3},
                                      {"name": "deep", "offset": 3, "width": 2}],
                            "indices": [{"column": "c_index", "position": 4, "cardinality": 3,
                                         "embedding_dim": 3}]})"));
  EXPECT_THAT(row_written(c, rows[0]), ElementsAre(0, 1, 0, 1, 1));
  auto again = FeatureColumns::from_preprocessing(c.preprocessing());
  EXPECT_EQ(layout_json(again->layout()), layout_json(c.layout()));
  EXPECT_EQ(again->groups(), c.groups());
  Json other = c.preprocessing();
  other["inputs"]["deep"] = Json::array({"x", "c_index", "c"});
  EXPECT_THAT([&] { FeatureColumns::from_preprocessing(other); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("do not list its columns")));
}

TEST(FeatureColumns, AColumnInTwoInputsIsAConfigErrorNamingBoth) {
  EXPECT_THAT(
      [] {
        FeatureColumns(declared_columns(Json::object()), wide_and_deep({"a"}, {"b", "a"}),
                       "data.train.inputs", "data.columns");
      },
      ::testing::ThrowsMessage<ConfigError>(AllOf(HasSubstr("data.train.inputs.deep[1]"),
                                                  HasSubstr("data.train.inputs.wide[0]"),
                                                  HasSubstr("feature: a"))));
}

TEST(FeatureColumns, RestoringOtherInputsIsAConfigError) {
  Rows rows = numbers("x", {1, 2});
  Json saved = fitted_columns(Json::object(), {"x"}, rows).preprocessing();
  InputGroups wide_x;
  wide_x.named = true;
  wide_x.groups = {{"wide", {"x"}}};
  FeatureColumns named(declared_columns(Json::object()), wide_x, "data.train.inputs",
                       "data.columns");
  EXPECT_THAT([&] { named.restore(saved); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("are not the config's")));
}

TEST(InputGroups, AreAMappingOfNamesToListsOfColumns) {
  auto problem_of = [](const Json& value) {
    InputGroups groups;
    try {
      OptionTraits<InputGroups>::read(value, groups, ReadContext{"data.train.inputs", nullptr});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(problem_of(Json::array({"a"})), HasSubstr("expected a mapping of input names"));
  EXPECT_THAT(problem_of({{"wide", Json::array()}}),
              AllOf(HasSubstr("data.train.inputs.wide"), HasSubstr("non-empty list")));
  EXPECT_THAT(problem_of({{"wide", {"a", 3}}}),
              AllOf(HasSubstr("data.train.inputs.wide[1]"), HasSubstr("a column name")));
  EXPECT_EQ(problem_of({{"wide", {"a"}}, {"deep", {"b"}}}), "accepted");
}

TEST(FeatureColumns, PreprocessingRebuildsTheSameColumns) {
  Rows rows({category("c", {"x"}), category("c", {"y"}), category("c", {"y"})});
  FeatureColumns c = fitted_columns({{"c", "categorical"}}, {"c"}, rows);
  auto again = FeatureColumns::from_preprocessing(c.preprocessing());
  EXPECT_EQ(again->width(), c.width());
  for (const char* value : {"x", "y", "new"})
    EXPECT_EQ(row_written(*again, category("c", {value})), row_written(c, category("c", {value})));
}

TEST(FeatureColumns, PreprocessingNeedsNoCopyOfAVocabularyFile) {
  std::string words = ::testing::TempDir() + "/kiln_vocabulary_test.txt";
  std::ofstream(words) << "x\ny\n";
  FeatureColumns c(declared_columns({{"c", {{"type", "categorical"}, {"vocabulary_file", words}}}}),
                   {"c"}, "input", "data.columns");
  Json saved = c.preprocessing();
  std::remove(words.c_str());  // as on a server the export was copied to
  auto again = FeatureColumns::from_preprocessing(saved);
  for (const char* value : {"x", "y", "new"})
    EXPECT_EQ(row_written(*again, category("c", {value})), row_written(c, category("c", {value})));
  EXPECT_EQ(again->preprocessing(), saved);
}

TEST(FeatureColumns, RestoringAfterTheColumnChangedIsAConfigError) {
  Rows rows = numbers("x", {1, 2});
  Json saved = fitted_columns({{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}}, {"x"}, rows)
                   .preprocessing();
  FeatureColumns changed(declared_columns({{"x", {{"type", "numeric"}, {"normalize", "minmax"}}}}),
                         {"x"}, "input", "data.columns");
  EXPECT_THAT([&] { changed.restore(saved); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("start a new run")));
}

TEST(FeatureColumns, AMalformedPreprocessingFileIsAConfigErrorSayingWhat) {
  auto problem_of = [](const std::string& text) {
    try {
      FeatureColumns::from_preprocessing(Json::parse(text));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(problem_of(R"({"columns": []})"), HasSubstr("not a kiln preprocessing file"));
  EXPECT_THAT(problem_of(R"({"format": 1, "columns": []})"),
              HasSubstr("not a kiln preprocessing file: its \"format\" is 1, not "
                        "\"kiln.preprocessing\""));
  EXPECT_THAT(problem_of(R"({"format": "kiln.preprocessing", "version": 2})"),
              HasSubstr("its \"columns\" list is missing"));
  EXPECT_THAT(problem_of(R"({"format": "kiln.preprocessing", "columns": 3})"),
              HasSubstr("its \"columns\" is 3, not a list"));
  EXPECT_THAT(problem_of(R"({"format": "kiln.preprocessing", "columns": []})"),
              HasSubstr("its \"version\" is null; this kiln reads versions 1 to 2"));
  std::string head = R"({"format": "kiln.preprocessing", "version": 1, "columns": [)";
  EXPECT_THAT(problem_of(head + R"({"spec": "numeric"}]})"), HasSubstr("no \"name\""));
  EXPECT_THAT(problem_of(head + R"({"name": "x"}]})"), HasSubstr("has no \"spec\""));
  std::string zscore = R"({"name": "x", "spec": {"type": "numeric", "normalize": "zscore"}, )";
  EXPECT_THAT(problem_of(head + zscore + R"("fitted": {"shift": ["a"]}}]})"),
              HasSubstr("\"shift\" holds \"a\""));
  EXPECT_THAT(
      problem_of(head + zscore + R"("fitted": {"shift": [0], "scale": [0], "fill": [0]}}]})"),
      HasSubstr("a column divides by it"));
  // A negative spread flipped a served prediction; an empty name read nothing (a campaign's finds).
  EXPECT_THAT(
      problem_of(head + zscore + R"("fitted": {"shift": [0], "scale": [-2.5], "fill": [0]}}]})"),
      HasSubstr("it is a spread: positive"));
  EXPECT_THAT(problem_of(head + R"({"name": "", "spec": "numeric", "width": 1}], "width": 1})"),
              HasSubstr("has no \"name\" string (not empty)"));
  EXPECT_THAT(problem_of(head + R"({"name": "b", "spec": {"type": "bucketize", "quantiles": 2},)" +
                         R"( "fitted": {"boundaries": [2, 1]}}]})"),
              HasSubstr("must increase strictly"));
  std::string hashed = R"({"name": "h", "spec": {"type": "categorical", "hash_buckets": 3}, )";
  EXPECT_EQ(problem_of(head + hashed + R"("width": 3}], "width": 3})"), "accepted");
  // Widths that do not add up, a column twice, a category twice: each read rows wrongly.
  EXPECT_THAT(problem_of(head + hashed + R"("width": 4}], "width": 4})"),
              HasSubstr("column \"h\" says width 4, but it writes 3"));
  EXPECT_THAT(problem_of(head + hashed + R"("width": 3}], "width": 5})"),
              HasSubstr("its \"width\" is 5, but its columns write 3"));
  EXPECT_THAT(problem_of(head + hashed + R"("width": 3}, )" + hashed + R"("width": 3}]})"),
              HasSubstr("the column \"h\" is listed twice"));
  EXPECT_THAT(problem_of(head + R"({"name": "c", "spec": {"type": "categorical"}, )" +
                         R"("fitted": {"vocabulary": ["a", "b", "a"]}, "width": 4}]})"),
              HasSubstr("\"vocabulary\" lists \"a\" twice (at 0 and 2)"));
  // A computed vocabulary over its max_tokens is refused before its words are looked at (5
  // million words took 17 s and 2 GB to be refused by the width).
  EXPECT_THAT(problem_of(head + R"({"name": "c", "spec": {"type": "categorical", )" +
                         R"("max_tokens": 2}, "fitted": {"vocabulary": ["a", "b", "c"]}, )" +
                         R"("width": 3}]})"),
              HasSubstr("\"vocabulary\" holds 3 words, more than the column's max_tokens (2)"));
  // What a column does not keep of its "fitted" would be ignored in silence (a campaign's find).
  std::string one_word = R"({"name": "c", "spec": {"type": "categorical"}, "width": 2, )";
  EXPECT_EQ(problem_of(head + one_word + R"("fitted": {"vocabulary": ["a"]}}], "width": 2})"),
            "accepted");
  EXPECT_THAT(problem_of(head + one_word +
                         R"("fitted": {"vocabulary": ["a"], "vocab_size": 1}}], "width": 2})"),
              HasSubstr("column \"c\": \"vocab_size\" is no key of its \"fitted\""));
  EXPECT_THAT(problem_of(head + one_word +
                         R"("fitted": {"vocabulary": ["a"], "missing": "a"}}], "width": 2})"),
              HasSubstr("\"missing\" is no key of its \"fitted\""));
  EXPECT_THAT(problem_of(head + hashed + R"("fitted": {"vocabulary": []}, "width": 3}]})"),
              HasSubstr("is not what the column keeps of it"));
  EXPECT_THAT(problem_of(head + hashed + R"("width": 3, "comment": "x"}], "width": 3})"),
              HasSubstr("column \"h\": \"comment\" is no key of a column"));
  // A hand-edited bucket count had 4 GB allocated before the width was checked: refused first.
  for (const char* buckets : {"\"hash_buckets\": 1000000000", "\"num_oov_buckets\": 1e12",
                              "\"hash_buckets\": 4611686018427387904"})
    EXPECT_THAT(problem_of(head + R"({"name": "h", "spec": {"type": "categorical", )" + buckets +
                           R"(}, "width": 3}], "width": 3})"),
                HasSubstr("preprocessing.json:h"))
        << buckets;
}

}  // namespace
}  // namespace kiln::tabular
