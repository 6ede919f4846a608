#include "kiln/core/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/core/mode.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

struct TrainOptions {
  int64_t epochs = 10;
  int64_t max = 100;
  double lr = 0.1;
  bool shuffle = true;
  void describe(Schema& s) {
    s.field("epochs", epochs, "Epochs to train.").min(0);
    s.field("max", max, "Step limit.");
    s.field("lr", lr, "Learning rate.").in_range(0, 1);
    s.field("shuffle", shuffle, "Shuffle every epoch.");
  }
};

struct ExpOptions {
  std::string name = "exp";
  Mode mode = Mode::kMin;
  std::vector<int64_t> hidden = {256, 128};
  std::vector<std::string> tags;
  int32_t workers = 2;
  TrainOptions train;
  void describe(Schema& s) {
    s.field("name", name, "Run name.");
    s.field("mode", mode, "Optimisation direction.");
    s.field("hidden", hidden, "Hidden widths.").each_min(1);
    s.field("tags", tags, "Free-form tags.");
    s.field("workers", workers, "Loader threads.");
    s.field("train", train, "Training loop.");
  }
};

struct RequiredOptions {
  std::string path;
  void describe(Schema& s) { s.field("path", path, "Where the data is.").require(); }
};

// Reads YAML `text`, attributed to exp.yaml, into a fresh ExpOptions.
ExpOptions read_yaml(const std::string& text) {
  Json node = parse_config_text(text, "exp.yaml", false);
  Origins origins;
  origins.record("", node, "exp.yaml");
  ExpOptions options;
  read_options(options, node, ReadContext{"", &origins});
  return options;
}

// The message of the ConfigError reading `text` throws.
std::string error_of(const std::string& text) {
  try {
    read_yaml(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Schema, ReadsEveryFieldType) {
  ExpOptions o = read_yaml(
      "name: run1\nmode: max\nhidden: [64, 32, 16]\ntags: [a, b]\nworkers: 4\n"
      "train: {epochs: 3, max: 7, lr: 0.5, shuffle: false}\n");
  EXPECT_EQ(o.name, "run1");
  EXPECT_EQ(enum_name(o.mode), "max");
  EXPECT_EQ(o.hidden, (std::vector<int64_t>{64, 32, 16}));
  EXPECT_EQ(o.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.workers, 4);
  EXPECT_EQ(o.train.epochs, 3);
  EXPECT_EQ(o.train.max, 7);
  EXPECT_DOUBLE_EQ(o.train.lr, 0.5);
  EXPECT_FALSE(o.train.shuffle);
}

TEST(Schema, AbsentKeysKeepTheirDefaults) {
  ExpOptions o = read_yaml("train: {epochs: 3}\n");
  EXPECT_EQ(o.name, "exp");
  EXPECT_EQ(o.hidden, (std::vector<int64_t>{256, 128}));
  EXPECT_TRUE(o.tags.empty());
  EXPECT_EQ(o.train.epochs, 3);
  EXPECT_EQ(o.train.max, 100);
  EXPECT_DOUBLE_EQ(o.train.lr, 0.1);
  EXPECT_TRUE(o.train.shuffle);
  ExpOptions all_defaults = read_yaml("");  // a null node means "all defaults"
  EXPECT_EQ(write_options(all_defaults), write_options(ExpOptions{}));
}

TEST(Schema, IntegerValuesReadAsNumbers) {
  EXPECT_DOUBLE_EQ(read_yaml("train: {lr: 1}\n").train.lr, 1.0);
}

TEST(Schema, UnknownKeyNamesThePathAndTheNearestKey) {
  std::string message = error_of("train: {maxx: 5}\n");
  EXPECT_THAT(message, HasSubstr("config error at train.maxx (exp.yaml)"));
  EXPECT_THAT(message, HasSubstr("unknown key \"maxx\""));
  EXPECT_THAT(message, HasSubstr("did you mean \"max\"?"));
  EXPECT_THAT(message, HasSubstr("known: epochs, max, lr, shuffle"));
  EXPECT_THAT(error_of("completely_unrelated: 1\n"), ::testing::Not(HasSubstr("did you mean")));
}

TEST(Schema, WrongTypesNameThePathAndOrigin) {
  EXPECT_EQ(error_of("train: {epochs: ten}\n"),
            "config error at train.epochs (exp.yaml): expected integer, got \"ten\"");
  EXPECT_THAT(error_of("train: {epochs: 1.5}\n"), HasSubstr("expected integer, got 1.5"));
  EXPECT_THAT(error_of("train: {lr: fast}\n"),
              HasSubstr("at train.lr (exp.yaml): expected number, got \"fast\""));
  EXPECT_THAT(error_of("train: {shuffle: 1}\n"),
              HasSubstr("at train.shuffle (exp.yaml): expected boolean"));
  EXPECT_THAT(error_of("name: 5\n"), HasSubstr("at name (exp.yaml): expected string, got 5"));
  EXPECT_THAT(error_of("train: 5\n"), HasSubstr("at train (exp.yaml): expected a mapping"));
  EXPECT_THAT(error_of("hidden: [1, x]\n"), HasSubstr("at hidden[1] (exp.yaml): expected integer"));
  EXPECT_THAT(error_of("workers: 3000000000\n"),
              HasSubstr("at workers (exp.yaml): expected integer"));
}

TEST(Schema, ChecksReportTheConstraint) {
  EXPECT_EQ(error_of("train: {epochs: -3}\n"),
            "config error at train.epochs (exp.yaml): expected integer >= 0, got -3");
  EXPECT_THAT(error_of("train: {lr: 1.5}\n"), HasSubstr("expected number in [0, 1], got 1.5"));
  EXPECT_THAT(error_of("hidden: [4, 0]\n"),
              HasSubstr("at hidden (exp.yaml): expected list of integer with every item >= 1"));
  EXPECT_EQ(read_yaml("train: {epochs: 0}\n").train.epochs, 0);  // the bound itself is fine
}

TEST(Schema, OneOfListsTheChoices) {
  EXPECT_EQ(enum_name(read_yaml("mode: max\n").mode), "max");
  EXPECT_THAT(error_of("mode: maximum\n"),
              HasSubstr("at mode (exp.yaml): expected one of \"min\", \"max\", got \"maximum\""));
}

TEST(Schema, RequiredKeysMustBeGiven) {
  RequiredOptions o;
  read_options(o, Json{{"path", "/data"}}, ReadContext{"data", nullptr});
  EXPECT_EQ(o.path, "/data");
  RequiredOptions missing;
  try {
    read_options(missing, Json::object(), ReadContext{"data", nullptr});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "data.path");
    EXPECT_THAT(e.what(), HasSubstr("missing required key \"path\""));
  }
}

TEST(Schema, AScalarWhereAListIsExpectedIsAOneItemList) {
  ExpOptions o = read_yaml("hidden: 64\ntags: solo\n");
  EXPECT_EQ(o.hidden, (std::vector<int64_t>{64}));
  EXPECT_EQ(o.tags, (std::vector<std::string>{"solo"}));
}

TEST(Schema, ErrorsNameTheFileTheValueCameFrom) {
  Json node = parse_config_text("train: {epochs: 3}\n", "a.yaml", false);
  Origins origins;
  origins.record("", node, "a.yaml");
  Json overlay = parse_config_text("train: {max: -1.5}\n", "b.yaml", false);
  deep_merge(node, overlay);
  origins.record("", overlay, "b.yaml");
  ExpOptions o;
  try {
    read_options(o, node, ReadContext{"", &origins});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.max");
    EXPECT_EQ(e.origin(), "b.yaml");
  }
}

TEST(Schema, WriteOptionsDumpsEveryField) {
  ExpOptions o;
  o.train.epochs = 5;
  o.tags = {"x"};
  EXPECT_EQ(write_options(o), Json::parse(R"({"name": "exp", "mode": "min", "hidden": [256, 128],
      "tags": ["x"], "workers": 2,
      "train": {"epochs": 5, "max": 100, "lr": 0.1, "shuffle": true}})"));
  // What is written reads back to the same options.
  ExpOptions back;
  read_options(back, write_options(o), ReadContext{});
  EXPECT_EQ(write_options(back), write_options(o));
}

TEST(Schema, DescribeOptionsDocumentsEveryField) {
  std::vector<FieldDoc> docs = describe_options<ExpOptions>();
  ASSERT_EQ(docs.size(), 6u);
  EXPECT_EQ(docs[0].key, "name");
  EXPECT_EQ(docs[0].type, "string");
  EXPECT_EQ(docs[0].default_value, "\"exp\"");
  EXPECT_EQ(docs[0].doc, "Run name.");
  EXPECT_EQ(docs[1].constraint, "one of: min max");
  EXPECT_EQ(docs[2].type, "list of integer");
  EXPECT_EQ(docs[2].default_value, "[256,128]");
  EXPECT_EQ(docs[2].constraint, "with every item >= 1");
  EXPECT_EQ(docs[5].type, "mapping");
  ASSERT_EQ(docs[5].children.size(), 4u);
  EXPECT_EQ(docs[5].children[0].key, "epochs");
  EXPECT_EQ(docs[5].children[0].constraint, ">= 0");
  EXPECT_EQ(docs[5].children[2].type, "number");
  EXPECT_EQ(docs[5].children[2].constraint, "in [0, 1]");
  EXPECT_EQ(docs[5].children[3].type, "boolean");
  EXPECT_EQ(describe_options<RequiredOptions>()[0].default_value, "required");
  EXPECT_TRUE(describe_options<NoOptions>().empty());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

struct NamedTrainings {
  std::map<std::string, TrainOptions> runs;
  void describe(Schema& s) { s.field("runs", runs, "Trainings by name."); }
};

TEST(Schema, MappingsReadEveryNamedValueWithDefaults) {
  NamedTrainings o;
  read_options(o, parse_config_text("runs: {fast: {lr: 0.5}, slow: {}}", "m.yaml", false),
               ReadContext{"", nullptr});
  ASSERT_EQ(o.runs.size(), 2u);
  EXPECT_EQ(o.runs["fast"].lr, 0.5);
  EXPECT_EQ(o.runs["slow"].epochs, 10);
  EXPECT_EQ(write_options(o)["runs"]["fast"]["lr"], 0.5);
  EXPECT_EQ(write_options(o)["runs"]["slow"]["max"], 100);
}

TEST(Schema, MappingErrorsNameTheEntry) {
  NamedTrainings o;
  try {
    read_options(o, parse_config_text("runs: {fast: {lrr: 0.5}}", "m.yaml", false),
                 ReadContext{"", nullptr});
    FAIL() << "accepted an unknown key";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "runs.fast.lrr");
  }
  EXPECT_THROW(
      read_options(o, parse_config_text("runs: [1, 2]", "m.yaml", false), ReadContext{"", nullptr}),
      ConfigError);
}

}  // namespace
}  // namespace kiln
