// Sections other folders register (core/config_section): `tune:`, which tune/ owns, is read and
// checked with every config, so `kiln train` refuses a wrong one as `kiln tune` does, and is
// kept resolved for tune/ to read back; the experiment config knows no section's type.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/experiment/experiment_config.h"
#include "kiln/tune/tune_options.h"

namespace kiln::experiment {
namespace experiment_config_sections_test {

using ::testing::HasSubstr;

ExperimentConfig parse(const std::string& extra_yaml) {
  RawConfig raw;
  raw.tree = parse_config_text(
      "data: {train: {type: fashion_mnist, split: train}}\n"
      "model: {type: sequential, layers: [flatten, {type: linear, out: 10}]}\n" +
          extra_yaml,
      "exp.yaml", false);
  return parse_experiment(raw);
}

TEST(ExperimentConfigSections, TuneIsReadResolvedAndReadBackByTune) {
  ExperimentConfig config = parse(
      "tune: {trials: 7, space: {optimizer.lr: {type: loguniform, "
      "low: 1.0e-4, high: 1.0e-1}}}\n");
  std::optional<tune::TuneOptions> options = tune::tune_section(config.sections);
  ASSERT_TRUE(options.has_value());
  EXPECT_EQ(options->trials, 7);
  EXPECT_EQ(options->parallel, 1);  // a default, filled in
  EXPECT_EQ(options->sampler.type(), "tpe");
  // The resolved config (config.yaml of a run) holds it with its defaults.
  Json written = write_options(config);
  EXPECT_EQ(written["tune"]["trials"], 7);
  EXPECT_EQ(written["tune"]["nproc"], 1);
}

TEST(ExperimentConfigSections, AConfigWithoutTuneHasNone) {
  EXPECT_FALSE(tune::tune_section(parse("").sections).has_value());
  EXPECT_TRUE(write_options(parse("")).contains("tune"));  // as null, like any absent option
}

TEST(ExperimentConfigSections, AWrongTuneSectionIsAConfigErrorOfTheExperiment) {
  try {
    parse("tune: {trails: 3}\n");
    FAIL() << "a misspelt tune key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tune.trails"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean \"trials\""));
  }
  EXPECT_THROW(parse("tune: {trials: 0}\n"), ConfigError);
  EXPECT_THROW(parse("tune: {sampler: annealing}\n"), ConfigError);
}

}  // namespace experiment_config_sections_test
}  // namespace kiln::experiment
