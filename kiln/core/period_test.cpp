#include "kiln/core/period.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "kiln/core/error.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using Unit = Period::Unit;

struct Case {
  const char* text;
  double amount;
  Unit unit;
};

TEST(Period, ParsesEveryUnitAndPlural) {
  const Case cases[] = {
      {"500 steps", 500, Unit::kSteps},
      {"1 step", 1, Unit::kSteps},
      {"1 epoch", 1, Unit::kEpochs},
      {"2 epochs", 2, Unit::kEpochs},
      {"100000 samples", 100000, Unit::kSamples},
      {"1 sample", 1, Unit::kSamples},
      {"90 s", 90, Unit::kSeconds},
      {"5 sec", 5, Unit::kSeconds},
      {"5 secs", 5, Unit::kSeconds},
      {"1 second", 1, Unit::kSeconds},
      {"7 seconds", 7, Unit::kSeconds},
      {"30 min", 1800, Unit::kSeconds},
      {"2 mins", 120, Unit::kSeconds},
      {"1 minute", 60, Unit::kSeconds},
      {"3 minutes", 180, Unit::kSeconds},
      {"2 h", 7200, Unit::kSeconds},
      {"1 hour", 3600, Unit::kSeconds},
      {"4 hours", 14400, Unit::kSeconds},
      {"  3 epochs  ", 3, Unit::kEpochs},
  };
  for (const auto& c : cases) {
    Period p = Period::parse(c.text);
    EXPECT_DOUBLE_EQ(p.amount(), c.amount) << c.text;
    EXPECT_EQ(p.unit(), c.unit) << c.text;
  }
}

TEST(Period, AcceptsFractionalEpochsAndTime) {
  EXPECT_DOUBLE_EQ(Period::parse("0.5 epochs").amount(), 0.5);
  EXPECT_DOUBLE_EQ(Period::parse("1.25 epochs").amount(), 1.25);
  EXPECT_DOUBLE_EQ(Period::parse("1.5 min").amount(), 90);
}

TEST(Period, RejectsBadTextNamingItAndListingTheUnits) {
  for (const char* text : {"2 fortnights", "-1 steps", "1.5 steps", "", "epochs", "0 epochs",
                           "1.5 samples", "inf epochs", "3"}) {
    try {
      Period::parse(text);
      ADD_FAILURE() << "accepted \"" << text << "\"";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("\"") + text + "\"")) << text;
      EXPECT_THAT(e.what(), HasSubstr("step(s), epoch(s), sample(s)")) << text;
      EXPECT_THAT(e.what(), HasSubstr("min/minute(s), h/hour(s)")) << text;
    }
  }
}

TEST(Period, SaysWhyANumberIsRejected) {
  EXPECT_THROW(
      {
        try {
          Period::parse("-1 steps");
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("positive"));
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          Period::parse("1.5 steps");
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("whole numbers"));
          throw;
        }
      },
      Error);
}

TEST(Period, ReachedOnceTheWholePeriodIsCovered) {
  Period steps = Period::parse("100 steps");
  EXPECT_FALSE(steps.reached({99, 0, 0, 0}));
  EXPECT_TRUE(steps.reached({100, 0, 0, 0}));
  EXPECT_TRUE(steps.reached({101, 0, 0, 0}));

  Period time = Period::parse("30 min");
  EXPECT_FALSE(time.reached({1000000, 50, 1000000, 1799.5}));
  EXPECT_TRUE(time.reached({0, 0, 0, 1800}));

  Period half = Period::parse("0.5 epochs");
  EXPECT_FALSE(half.reached({0, 0.49, 0, 0}));
  EXPECT_TRUE(half.reached({0, 0.5, 0, 0}));
}

TEST(Period, CrossedTriggersOncePerMultiple) {
  Period every = Period::parse("2 steps");
  auto at = [](int64_t step) { return Progress{step, 0, 0, 0}; };
  EXPECT_FALSE(every.crossed(at(0), at(1)));
  EXPECT_TRUE(every.crossed(at(1), at(2)));
  EXPECT_FALSE(every.crossed(at(2), at(3)));
  EXPECT_TRUE(every.crossed(at(3), at(4)));
  EXPECT_FALSE(every.crossed(at(2), at(2)));  // no progress, no trigger
  EXPECT_TRUE(every.crossed(at(1), at(7)));   // a jump over several multiples still triggers
  EXPECT_FALSE(every.crossed(at(0), at(0)));
}

TEST(Period, CrossedToleratesFloatingPointEpochs) {
  Period tenth = Period::parse("0.1 epochs");
  EXPECT_TRUE(tenth.crossed({0, 0.2, 0, 0}, {0, 0.1 + 0.2, 0, 0}));
  EXPECT_FALSE(tenth.crossed({0, 0.1 + 0.2, 0, 0}, {0, 0.35, 0, 0}));

  Period samples = Period::parse("1000 samples");
  EXPECT_FALSE(samples.crossed({0, 0, 900, 0}, {0, 0, 999, 0}));
  EXPECT_TRUE(samples.crossed({0, 0, 999, 0}, {0, 0, 1000, 0}));
}

TEST(Period, ToStringRoundTrips) {
  const std::pair<const char*, const char*> cases[] = {
      {"500 steps", "500 steps"},
      {"1 step", "1 step"},
      {"1 epoch", "1 epoch"},
      {"2 epochs", "2 epochs"},
      {"0.5 epochs", "0.5 epochs"},
      {"100000 samples", "100000 samples"},
      {"30 min", "30 min"},
      {"90 s", "90 s"},
      {"2 h", "2 h"},
      {"120 minutes", "2 h"},
      {"60 seconds", "1 min"},
  };
  for (const auto& [text, expected] : cases) {
    Period p = Period::parse(text);
    EXPECT_EQ(p.to_string(), expected) << text;
    Period back = Period::parse(p.to_string());
    EXPECT_EQ(back.unit(), p.unit()) << text;
    EXPECT_DOUBLE_EQ(back.amount(), p.amount()) << text;
  }
}

TEST(Period, InStepsRoundsUpAndKnowsNoStepsForATime) {
  EXPECT_EQ(Period::parse("7 steps").in_steps(10, 32), 7);
  EXPECT_EQ(Period::parse("1.25 epochs").in_steps(10, 32), 13);
  EXPECT_EQ(Period::parse("0.3 epochs").in_steps(10, 32), 3);  // not 4 from 3.0000000000000004
  EXPECT_EQ(Period::parse("100 samples").in_steps(10, 32), 4);
  EXPECT_FALSE(Period::parse("5 min").in_steps(10, 32).has_value());
}

struct TrainOptions {
  Period max = Period(10, Period::Unit::kEpochs);
  Period validate_every = Period(1, Period::Unit::kEpochs);
  void describe(Schema& s) {
    s.field("max", max, "How long to train.");
    s.field("validate_every", validate_every, "How often to validate.");
  }
};

TEST(Period, IsASchemaFieldType) {
  Origins origins;
  Json node = {{"max", "500 steps"}};
  origins.record("", node, "exp.yaml");
  TrainOptions options;
  read_options(options, node, ReadContext{"train", &origins});
  EXPECT_EQ(options.max.unit(), Unit::kSteps);
  EXPECT_DOUBLE_EQ(options.max.amount(), 500);
  EXPECT_EQ(options.validate_every.to_string(), "1 epoch");  // default kept
  EXPECT_EQ(write_options(options), Json({{"max", "500 steps"}, {"validate_every", "1 epoch"}}));

  auto error_for = [&](const Json& bad) {
    TrainOptions fresh;
    try {
      read_options(fresh, {{"max", bad}}, ReadContext{"train", &origins});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_for("2 fortnights"), HasSubstr("config error at train.max (exp.yaml)"));
  EXPECT_THAT(error_for("2 fortnights"), HasSubstr("\"2 fortnights\""));
  EXPECT_THAT(error_for(10), HasSubstr("config error at train.max (exp.yaml): expected a period"));

  auto docs = describe_options<TrainOptions>();
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].type, "period");
  EXPECT_EQ(docs[0].default_value, "\"10 epochs\"");
}

struct WarmupOptions {
  OptionalPeriod warmup;
  void describe(Schema& s) { s.field("warmup", warmup, "Warm-up, or none."); }
};

TEST(OptionalPeriod, NullAndZeroMeanNoneAndAPeriodRoundTrips) {
  Origins origins;
  auto read = [&](const Json& value) {
    WarmupOptions options;
    options.warmup.period = Period(3, Unit::kSteps);
    read_options(options, {{"warmup", value}}, ReadContext{"scheduler", &origins});
    return options;
  };
  EXPECT_FALSE(read(nullptr).warmup.period.has_value());
  EXPECT_FALSE(read(0).warmup.period.has_value());
  WarmupOptions two_epochs = read("2 epochs");
  ASSERT_TRUE(two_epochs.warmup.period.has_value());
  EXPECT_EQ(two_epochs.warmup.period->to_string(), "2 epochs");
  EXPECT_EQ(write_options(two_epochs), Json({{"warmup", "2 epochs"}}));
  EXPECT_EQ(write_options(WarmupOptions{}), Json({{"warmup", nullptr}}));
  try {
    read(5);
    FAIL() << "a bare number other than 0 is not a period";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("config error at scheduler.warmup"));
    EXPECT_THAT(e.what(), HasSubstr("expected a period"));
  }
}

// Fuzzing found these (tests/fuzz/regressions/fuzz_period): an amount that overflows once
// converted (1e308 hours: infinite seconds, saved as "inf s"), a step count past int64 (undefined
// conversion), and text after a NUL byte.
TEST(Period, RefusesAmountsPastTwoToThe53AndTextAfterANul) {
  for (const std::string& text : std::vector<std::string>{"1e308 h", "1e300 steps", "1e17 samples",
                                                          std::string("1 epoch\0junk", 12)}) {
    EXPECT_THROW(Period::parse(text), Error) << text;
  }
  EXPECT_EQ(Period::parse("9007199254740992 steps").in_steps(10, 32), 9007199254740992);
  EXPECT_EQ(Period::parse("1e15 epochs").in_steps(1e6, 32), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace kiln
