// Enum-typed options (an enum with enum_names): read from their names, refused otherwise with the
// names listed, written and documented by name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/core/mode.h"
#include "kiln/core/schema.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

struct WatchOptions {
  Mode mode = Mode::kMin;
  ModeOrAuto compare = ModeOrAuto::kAuto;
  void describe(Schema& s) {
    s.field("mode", mode, "Which way is better.");
    s.field("compare", compare, "The same, or auto.");
  }
};

WatchOptions read(const Json& node) {
  WatchOptions options;
  read_options(options, node, ReadContext{"watch"});
  return options;
}

TEST(EnumOption, ReadsItsNames) {
  WatchOptions options = read({{"mode", "max"}, {"compare", "min"}});
  EXPECT_EQ(options.mode, Mode::kMax);
  EXPECT_EQ(options.compare, ModeOrAuto::kMin);
  EXPECT_EQ(read(Json::object()).compare, ModeOrAuto::kAuto);
}

TEST(EnumOption, AnyOtherValueIsAConfigErrorListingTheNames) {
  try {
    read({{"compare", "maximum"}});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "watch.compare");
    EXPECT_THAT(e.what(), HasSubstr("expected one of \"auto\", \"min\", \"max\", got \"maximum\""));
  }
  EXPECT_THROW(read({{"mode", 1}}), ConfigError);
}

TEST(EnumOption, IsWrittenAndDocumentedByName) {
  WatchOptions options;
  options.mode = Mode::kMax;
  EXPECT_EQ(write_options(options), (Json{{"mode", "max"}, {"compare", "auto"}}));
  std::vector<FieldDoc> docs = describe_options<WatchOptions>();
  EXPECT_EQ(docs[0].default_value, "\"min\"");
  EXPECT_EQ(docs[1].constraint, "one of: auto min max");
  EXPECT_EQ(enum_name(Mode::kMax), "max");
}

struct NarrowOptions {
  ModeOrAuto compare = ModeOrAuto::kMin;
  void describe(Schema& s) {
    s.field("compare", compare, "No auto here.").only({ModeOrAuto::kMin, ModeOrAuto::kMax});
  }
};

TEST(EnumOption, OnlySomeValuesMayBeAllowedAndListed) {
  NarrowOptions options;
  read_options(options, {{"compare", "max"}}, ReadContext{"narrow"});
  EXPECT_EQ(options.compare, ModeOrAuto::kMax);
  try {
    read_options(options, {{"compare", "auto"}}, ReadContext{"narrow"});
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected one of \"min\", \"max\", got \"auto\""));
  }
  EXPECT_EQ(describe_options<NarrowOptions>()[0].constraint, "one of: min max");
}

TEST(EnumOption, AutoTakesTheRunsMode) {
  EXPECT_EQ(resolve_mode(ModeOrAuto::kAuto, Mode::kMax), Mode::kMax);
  EXPECT_EQ(resolve_mode(ModeOrAuto::kMin, Mode::kMax), Mode::kMin);
}

}  // namespace
}  // namespace kiln
