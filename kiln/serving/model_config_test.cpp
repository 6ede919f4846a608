#include "kiln/serving/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln::serving {
namespace model_config_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// As TensorFlow Serving's docs write one (serving_config.md): two models, a version policy,
// labels.
constexpr const char* kTextConfig = R"(
model_config_list {
  config {
    name: 'fashion'
    base_path: '/models/fashion'
    model_platform: 'tensorflow'
    model_version_policy { specific { versions: 42 versions: 43 } }
    version_labels { key: 'stable' value: 42 }
    version_labels { key: 'canary' value: 43 }
  }
  config {
    name: "curves"
    base_path: "exports/curves"
    model_version_policy { latest { num_versions: 2 } }
  }
}
)";

std::string error_of(const std::string& text, bool yaml = false) {
  try {
    parse_model_config(text, "models.config", yaml, "/srv");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(ModelConfig, ReadsTensorFlowServingsTextFormat) {
  std::vector<ServedModel> models = parse_model_config(kTextConfig, "models.config", false, "/srv");
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].name, "fashion");
  EXPECT_EQ(models[0].base_path, "/models/fashion");
  EXPECT_EQ(models[0].platform, "tensorflow");
  EXPECT_EQ(models[0].policy.kind, VersionPolicy::Kind::kSpecific);
  EXPECT_THAT(models[0].policy.versions, ElementsAre(42, 43));
  EXPECT_EQ(models[0].labels.at("stable"), 42);
  EXPECT_EQ(models[0].labels.at("canary"), 43);
  EXPECT_EQ(models[1].base_path, "/srv/exports/curves") << "relative to the config's folder";
  EXPECT_EQ(models[1].policy.kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ(models[1].policy.latest, 2);
}

TEST(ModelConfig, ReadsTheSameTreeInYamlFromAFile) {
  testing::TempDir dir;
  std::string path = dir.write("models.yaml", R"(
model_config_list:
  config:
    - name: fashion
      base_path: exports/fashion
      model_version_policy: {all: {}}
    - name: latest_only
      base_path: /models/x
)");
  std::vector<ServedModel> models = read_model_config(path);
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].base_path, dir.file("exports/fashion"));
  EXPECT_EQ(models[0].policy.kind, VersionPolicy::Kind::kAll);
  EXPECT_EQ(models[1].policy.kind, VersionPolicy::Kind::kLatest);
  EXPECT_EQ(models[1].policy.latest, 1);
}

TEST(ModelConfig, MistakesAreConfigErrorsNamingTheFileAndWhere) {
  EXPECT_THAT(error_of("model_config_list { config { name: 'a' base_path: '/x' }"),
              HasSubstr("(models.config): line 1, column"));
  EXPECT_THAT(error_of("model_config_list { config { nam: 'a' } }"), HasSubstr("\"nam\""));
  EXPECT_THAT(error_of(""), HasSubstr("no models"));
  EXPECT_THAT(error_of("model_config_list { config { base_path: '/x' } }"),
              HasSubstr("config error at model_config_list.config[0].name (models.config)"));
  EXPECT_THAT(error_of("model_config_list { config { name: 'a' } }"),
              HasSubstr("model_config_list.config[0].base_path"));
  EXPECT_THAT(error_of("model_config_list { config { name: 'a' base_path: '/x' } "
                       "config { name: 'a' base_path: '/y' } }"),
              HasSubstr("config[1].name (models.config): model \"a\" is configured twice"));
  EXPECT_THAT(error_of("model_config_list { config { name: 'a' base_path: '/x' "
                       "model_version_policy { specific { versions: 1 } } "
                       "version_labels { key: 'stable' value: 2 } } }"),
              HasSubstr("label \"stable\" names version 2, which the version policy does not "
                        "serve (1)"));
  EXPECT_THAT(error_of("model_config_list { config { name: 'a' base_path: '/x' "
                       "model_version_policy { specific { } } } }"),
              HasSubstr("names no version"));
  EXPECT_THAT(error_of("model_config_list: {config: [{name: a, base_path: /x, logging: 1}]}", true),
              HasSubstr("logging"));
}

TEST(VersionsToServe, LatestAllAndSpecificChooseAmongTheVersionsOnDisk) {
  VersionPolicy latest;
  EXPECT_THAT(versions_to_serve(latest, {3, 1, 7}), ElementsAre(7));
  latest.latest = 2;
  EXPECT_THAT(versions_to_serve(latest, {3, 1, 7}), ElementsAre(3, 7));
  latest.latest = 5;
  EXPECT_THAT(versions_to_serve(latest, {3, 1}), ElementsAre(1, 3));
  EXPECT_TRUE(versions_to_serve(latest, {}).empty());
  VersionPolicy all{VersionPolicy::Kind::kAll, 1, {}};
  EXPECT_THAT(versions_to_serve(all, {2, 1, 2}), ElementsAre(1, 2));
  VersionPolicy specific{VersionPolicy::Kind::kSpecific, 1, {1, 9}};
  EXPECT_THAT(versions_to_serve(specific, {1, 2, 3}), ElementsAre(1));
}

}  // namespace model_config_test
}  // namespace kiln::serving
