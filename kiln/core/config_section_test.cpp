#include "kiln/core/config_section.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln {
namespace config_section_test {

using ::testing::HasSubstr;

// A section another folder would own, and a config that knows it only as a registered section.
struct SearchOptions {
  int64_t trials = 20;
  std::string sampler = "tpe";
  void describe(Schema& s) {
    s.field("trials", trials, "Trials.").min(1);
    s.field("sampler", sampler, "Sampler.");
  }
};

const bool kRegistered =
    register_options_section<SearchOptions>("config_section_test_search", "A test's section.");

struct HostConfig {
  int64_t seed = 0;
  ConfigSections sections;
  void describe(Schema& s) {
    s.field("seed", seed, "Seed.");
    describe_config_sections(s, sections);
  }
};

HostConfig read_host(const Json& tree) {
  HostConfig config;
  read_options(config, tree, ReadContext{});
  return config;
}

TEST(ConfigSection, ARegisteredSectionIsReadResolvedAndReadBackByItsOwner) {
  ASSERT_TRUE(kRegistered);
  HostConfig config = read_host(Json::parse(R"({"config_section_test_search": {"trials": 5}})"));
  const auto& value = config.sections.at("config_section_test_search");
  ASSERT_TRUE(value.resolved.has_value());
  EXPECT_EQ(*value.resolved, Json::parse(R"({"trials": 5, "sampler": "tpe"})"));
  auto options = read_resolved_section<SearchOptions>(value.resolved, "config_section_test_search");
  ASSERT_TRUE(options.has_value());
  EXPECT_EQ(options->trials, 5);
  EXPECT_EQ(write_options(config)["config_section_test_search"]["sampler"], "tpe");
}

TEST(ConfigSection, AnAbsentSectionStaysAbsent) {
  HostConfig config = read_host(Json::parse(R"({"seed": 3})"));
  EXPECT_FALSE(config.sections.at("config_section_test_search").resolved.has_value());
  EXPECT_FALSE(read_resolved_section<SearchOptions>(std::nullopt, "x").has_value());
  EXPECT_TRUE(write_options(config)["config_section_test_search"].is_null());
}

TEST(ConfigSection, AWrongSectionIsAConfigErrorAtItsPath) {
  try {
    read_host(Json::parse(R"({"config_section_test_search": {"trails": 5}})"));
    FAIL() << "an unknown key was accepted";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("config_section_test_search.trails"));
    EXPECT_THAT(error.what(), HasSubstr("did you mean \"trials\""));
  }
  EXPECT_THROW(read_host(Json::parse(R"({"config_section_test_search": {"trials": 0}})")),
               ConfigError);
  EXPECT_THROW(read_host(Json::parse(R"({"config_section_test_search": [1]})")), ConfigError);
}

TEST(ConfigSection, AKeyRegisteredTwiceIsABug) {
  EXPECT_THROW(register_options_section<SearchOptions>("config_section_test_search", "again"),
               InternalError);
}

TEST(ConfigSection, ItIsDocumentedAsAnOptionalMapping) {
  std::vector<FieldDoc> docs = describe_options<HostConfig>();
  auto section = std::find_if(docs.begin(), docs.end(), [](const FieldDoc& doc) {
    return doc.key == "config_section_test_search";
  });
  ASSERT_NE(section, docs.end());
  EXPECT_EQ(section->type, "mapping | null");
  EXPECT_EQ(section->doc, "A test's section.");
}

}  // namespace config_section_test
}  // namespace kiln
