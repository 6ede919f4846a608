// fANOVA importance against Optuna 3.1's on the same trials (tests/golden/fanova.json, written by
// tests/golden/make_fanova_golden.py): within 0.05 of each share, the same most important
// parameter; and what `kiln tune show` builds on it: the parameters every trial has, sorted.

#include "kiln/tune/fanova.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/json_text.h"
#include "kiln/core/text_file.h"
#include "kiln/tune/study_report.h"

namespace kiln::tune {
namespace fanova_test {

std::vector<TrialRecord> trials_of(const SearchSpace& space, const Json& trials) {
  std::vector<TrialRecord> out;
  for (const Json& t : trials) {
    TrialRecord record;
    record.number = int64_t(out.size());
    record.state = TrialState::kComplete;
    record.values = t["values"];
    record.assignment = *space.assignment_of(t["values"]);
    record.value = t["value"].get<double>();
    out.push_back(record);
  }
  return out;
}

TEST(Fanova, SharesAreOptunasOnTheSameTrials) {
  Json golden = parse_json_text(read_text_file(std::string(KILN_GOLDEN_DIR) + "/fanova.json"));
  for (const Json& c : golden["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    SearchSpace space = SearchSpace::read(c["space"], {"tune.space", nullptr});
    auto ours = fanova_importance(space, trials_of(space, c["trials"]));
    ASSERT_EQ(ours.size(), c["importances"].size());
    double best = -1;
    std::string optunas_first;
    for (const auto& [name, share] : c["importances"].items())
      if (share.get<double>() > best) {
        best = share.get<double>();
        optunas_first = name;
      }
    if (c["name"] != "an_interaction") {  // there Optuna's first two are within 0.01
      EXPECT_EQ(ours.front().first, optunas_first);
    }
    for (const auto& [name, share] : ours)
      EXPECT_NEAR(share, c["importances"][name].get<double>(), 0.05) << name;
  }
}

TEST(Fanova, OnlyParametersEveryTrialHasAndNothingFromOneValue) {
  SearchSpace space =
      SearchSpace::read(Json::parse(R"({"kind": {"type": "choice", "values": ["a", "b"]},
                      "x": {"type": "uniform", "low": 0, "high": 1, "when": {"kind": "a"}},
                      "y": {"type": "uniform", "low": 0, "high": 1}})"),
                        {"tune.space", nullptr});
  Json trials = Json::array();
  for (int i = 0; i < 20; ++i) {
    Json values = {{"kind", i % 2 ? "a" : "b"}, {"y", i / 20.0}};
    if (i % 2) values["x"] = 0.5;
    trials.push_back({{"values", values}, {"value", 3.0 * (i / 20.0)}});
  }
  auto shares = fanova_importance(space, trials_of(space, trials));
  ASSERT_EQ(shares.size(), 2u);  // x: not in every trial
  EXPECT_EQ(shares.front().first, "y");
  EXPECT_GT(shares.front().second, 0.95);
  for (Json& t : trials) t["value"] = 1.0;
  EXPECT_TRUE(fanova_importance(space, trials_of(space, trials)).empty());
  EXPECT_TRUE(fanova_importances({{{0.5}, 1.0}}, 1).empty());
}

}  // namespace fanova_test
}  // namespace kiln::tune
