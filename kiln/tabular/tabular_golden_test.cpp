// Feature columns fitted on generated data against NumPy and scikit-learn
// (tests/golden/make_tabular_golden.py wrote tabular.json).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kiln/tabular/feature_columns.h"

namespace kiln::tabular {
namespace {

class Values : public TabularSource {
 public:
  explicit Values(std::vector<float> values) : values_(std::move(values)) {}
  int64_t rows() const override { return int64_t(values_.size()); }
  void visit(int64_t begin, int64_t end, const RowVisitor& visit) const override {
    for (int64_t r = begin; r < end; ++r)
      visit(r, {{"x", io::float_feature({values_[size_t(r)]})}}, {"golden", r, -1});
  }

 private:
  std::vector<float> values_;
};

Json golden_cases() {
  std::ifstream in(std::string(KILN_GOLDEN_DIR) + "/tabular.json");
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str()).at("cases");
}

Json fitted(const Json& columns, const std::vector<std::string>& input, const Values& data) {
  ComponentMap map("column");
  OptionTraits<ComponentMap>::read(columns, map, ReadContext{"data.columns", nullptr});
  FeatureColumns made(map, input, "input", "data.columns");
  made.fit(data, 2);
  return made.preprocessing()["columns"];
}

TEST(TabularGolden, StatisticsAndQuantileEdgesAreScikitLearnsAndNumpys) {
  for (const Json& c : golden_cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    Values data(c["values"].get<std::vector<float>>());
    Json columns = fitted({{"z", {{"type", "numeric"}, {"feature", "x"}, {"normalize", "zscore"}}},
                           {"m", {{"type", "numeric"}, {"feature", "x"}, {"normalize", "minmax"}}},
                           {"q",
                            {{"type", "bucketize"},
                             {"feature", "x"},
                             {"quantiles", c["quantiles"]},
                             {"output", "index"}}}},
                          {"z", "m", "q"}, data);
    double mean = c["mean"], std = c["std"], low = c["min"], high = c["max"];
    EXPECT_NEAR(columns[0]["fitted"]["shift"][0].get<double>(), mean, 1e-9 * (1 + std::abs(mean)));
    EXPECT_NEAR(columns[0]["fitted"]["scale"][0].get<double>(), std, 1e-9 * (1 + std));
    EXPECT_EQ(columns[1]["fitted"]["shift"][0].get<double>(), low);
    EXPECT_NEAR(columns[1]["fitted"]["scale"][0].get<double>(), high - low == 0 ? 1 : high - low,
                1e-12);
    std::vector<double> edges = columns[2]["fitted"]["boundaries"].get<std::vector<double>>();
    std::vector<double> expected = c["edges"].get<std::vector<double>>();
    ASSERT_EQ(edges.size(), expected.size());
    for (size_t i = 0; i < edges.size(); ++i) EXPECT_NEAR(edges[i], expected[i], 1e-9);
  }
}

TEST(TabularGolden, BucketsOfValuesAreNumpysSearchsortedRight) {
  for (const Json& c : golden_cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    Json columns = {{"q",
                     {{"type", "bucketize"},
                      {"feature", "x"},
                      {"boundaries", c["edges"]},
                      {"output", "index"}}}};
    ComponentMap map("column");
    OptionTraits<ComponentMap>::read(columns, map, ReadContext{"data.columns", nullptr});
    FeatureColumns made(map, {"q"}, "input", "data.columns");
    std::vector<float> probes = c["probes"].get<std::vector<float>>();
    std::vector<int64_t> buckets = c["buckets"].get<std::vector<int64_t>>();
    for (size_t i = 0; i < probes.size(); ++i) {
      float bucket = -1;
      made.write({{"x", io::float_feature({probes[i]})}}, {"golden", int64_t(i), -1}, &bucket);
      EXPECT_EQ(bucket, float(buckets[i])) << "value " << probes[i];
    }
  }
}

}  // namespace
}  // namespace kiln::tabular
