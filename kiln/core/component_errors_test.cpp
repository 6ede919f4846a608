// Errors thrown while a registry builds a component name the component's config path, however the
// component reported them (rethrow_at_config_path).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>

#include "kiln/core/error.h"
#include "kiln/core/registry.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

class Gadget {
 public:
  virtual ~Gadget() = default;
};

Registry<Gadget>& gadget_registry() {
  static Registry<Gadget> registry("test_gadget", "Gadgets that fail as they are built.");
  return registry;
}

// What the gadget's constructor throws.
struct FailOptions {
  std::string with = "nothing";
  void describe(Schema& s) { s.field("with", with, "The error to throw."); }
};

class Failing : public Gadget {
 public:
  explicit Failing(const FailOptions& o) {
    if (o.with == "relative") throw ConfigError("warmup", "", "too long");
    if (o.with == "unnamed") throw ConfigError("", "", "needs a total");
    if (o.with == "nested") throw ConfigError("schedules.momentum.inner.k", "", "too big");
    if (o.with == "data") throw DataError("a.tfrecord", 3, 120, "bad CRC");
    if (o.with == "io") throw IoError("open", "missing.idx", ENOENT);
    if (o.with == "plain") throw Error("the options do not fit together");
    if (o.with == "bug") throw InternalError("a bug");
  }
};

KILN_REGISTER(gadget_registry, "failing", Failing, FailOptions, "Throws what it is told to.");

// Builds a failing gadget configured at schedules.momentum and rethrows what it throws.
void build(const std::string& with) {
  ComponentSpec spec("test_gadget", Json{{"type", "failing"}, {"with", with}});
  spec.path = "schedules.momentum";
  gadget_registry().create(spec);
}

std::string config_path_of(const std::string& with) {
  try {
    build(with);
  } catch (const ConfigError& e) {
    return e.path();
  }
  return "no ConfigError";
}

TEST(ComponentErrors, ARelativePathMovesUnderTheComponents) {
  EXPECT_EQ(config_path_of("relative"), "schedules.momentum.warmup");
  EXPECT_EQ(config_path_of("unnamed"), "schedules.momentum");
}

TEST(ComponentErrors, APathAlreadyUnderTheComponentStays) {
  // As a component built inside this one (a layer of a network) reports it.
  EXPECT_EQ(config_path_of("nested"), "schedules.momentum.inner.k");
}

TEST(ComponentErrors, AnyOtherErrorKeepsItsKindAndSaysWhichComponent) {
  try {
    build("plain");
    FAIL() << "no error";
  } catch (const ConfigError&) {
    FAIL() << "became a config error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the options do not fit together (the test_gadget at schedules.momentum)");
  }
  try {
    build("bug");
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_EQ(std::string(e.what()), "a bug");
  }
}

TEST(ComponentErrors, DataAndFileErrorsKeepTheirKindAndSayWhichComponentReadThem) {
  try {
    build("data");
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.record(), 3);
    EXPECT_THAT(e.what(), HasSubstr("a.tfrecord, record 3, byte offset 120: bad CRC (the "
                                    "test_gadget at schedules.momentum)"));
  }
  try {
    build("io");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing.idx"));
    EXPECT_THAT(e.what(), HasSubstr("(the test_gadget at schedules.momentum)"));
  }
}

TEST(ComponentErrors, ANullSpecIsAConfigErrorAtItsPath) {
  ComponentSpec spec("test_gadget");
  spec.path = "scheduler";
  try {
    gadget_registry().create(spec);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "scheduler");
    EXPECT_THAT(e.what(), HasSubstr("got null"));
  }
}

}  // namespace
}  // namespace kiln
