// kiln's event files, read back by the tests' own decoder (tests/support/event_file_reader.h),
// which shares no code with the writer and is itself checked against files TensorFlow wrote.

#include "kiln/tensorboard/event_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/error.h"
#include "tests/support/event_file_reader.h"
#include "tests/support/temp_dir.h"

namespace kiln::tensorboard {
namespace {

using ::testing::ElementsAre;
using ::testing::MatchesRegex;
using ::testing::Pair;

namespace fs = std::filesystem;
using testing::DecodedEvent;

std::vector<DecodedEvent> events_of(const std::string& directory) {
  std::vector<std::string> files = testing::event_files_in(directory);
  EXPECT_EQ(files.size(), 1u) << directory;
  return files.empty() ? std::vector<DecodedEvent>{} : testing::read_event_file(files[0]);
}

TEST(EventLog, AScalarIsWrittenAsTensorFlow2WritesIt) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "trainer-1", 4242});
  log.scalar("val", "accuracy", 5, 0.75, 1000.5);
  log.flush();
  std::vector<std::string> files = testing::event_files_in(dir.file("val"));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_THAT(fs::path(files[0]).filename().string(),
              MatchesRegex("events\\.out\\.tfevents\\.0000001000\\.trainer-1\\.4242\\.[0-9]+"));
  std::vector<DecodedEvent> events = testing::read_event_file(files[0]);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].wall_time, 1000.5);
  EXPECT_EQ(events[0].source_writer, "kiln");
  EXPECT_EQ(events[1].step, 5);
  EXPECT_EQ(events[1].wall_time, 1000.5);
  ASSERT_EQ(events[1].values.size(), 1u);
  const testing::DecodedValue& value = events[1].values[0];
  EXPECT_EQ(value.tag, "accuracy");
  EXPECT_EQ(value.plugin, "scalars");
  ASSERT_TRUE(value.tensor.has_value());
  EXPECT_EQ(value.tensor->dtype, 1);  // DT_FLOAT
  EXPECT_TRUE(value.tensor->has_shape);
  EXPECT_TRUE(value.tensor->shape.empty());
  EXPECT_EQ(value.tensor->content.size(), 4u);
  EXPECT_EQ(testing::scalar_of(value), 0.75);
}

TEST(EventLog, EachSplitHasItsDirectoryAndTheRunItsOwnForHyperParameters) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "host", 1});
  log.scalar("train", "loss", 1, 2.0, 10);
  log.scalar("val", "loss", 1, 3.0, 11);
  log.hparams_start({{"optimizer.lr", 0.1}}, {{"val", "loss"}}, "mnist", 12);
  log.flush();
  EXPECT_EQ(testing::scalar_of(events_of(dir.file("train"))[1].values[0]), 2.0);
  EXPECT_EQ(testing::scalar_of(events_of(dir.file("val"))[1].values[0]), 3.0);
  std::vector<DecodedEvent> run = events_of(dir.path());
  ASSERT_EQ(run.size(), 3u);
  EXPECT_EQ(run[1].values[0].tag, "_hparams_/experiment");
  EXPECT_EQ(run[2].values[0].tag, "_hparams_/session_start_info");
}

// A resumed run goes on in new files whose first event after the version is SessionLog START at
// the step it goes on from; the new file sorts after the old one, even within the same second.
TEST(EventLog, ARestartBeginsNewFilesWithSessionStartThatSortAfterTheOldOnes) {
  testing::TempDir dir;
  {
    EventLog log(dir.path(), {0, "host", 7});
    for (int step = 1; step <= 4; ++step) log.scalar("train", "loss", step, step, 1000);
    log.restart_at(3);
    log.scalar("train", "loss", 3, 30, 1000);
  }
  std::vector<std::string> files = testing::event_files_in(dir.file("train"));
  ASSERT_EQ(files.size(), 2u);
  std::vector<DecodedEvent> old = testing::read_event_file(files[0]);
  std::vector<DecodedEvent> resumed = testing::read_event_file(files[1]);
  EXPECT_EQ(old.size(), 5u);
  ASSERT_EQ(resumed.size(), 3u);
  EXPECT_EQ(resumed[0].file_version, "brain.Event:2");
  EXPECT_EQ(resumed[1].session_status, 1);  // START
  EXPECT_EQ(resumed[1].step, 3);
  EXPECT_EQ(resumed[2].step, 3);
  EXPECT_EQ(testing::scalar_of(resumed[2].values[0]), 30);
  EXPECT_THAT(fs::path(files[1]).filename().string(),
              MatchesRegex("events\\.out\\.tfevents\\.0000001001\\..*"));
}

TEST(EventLog, TextIsAStringTensorForTheTextPlugin) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "host", 1});
  log.text("", "notes", 0, "lr 0.1 *diverged*", 5);
  log.flush();
  const testing::DecodedValue value = events_of(dir.path())[1].values[0];
  EXPECT_EQ(value.plugin, "text");
  ASSERT_TRUE(value.tensor.has_value());
  EXPECT_EQ(value.tensor->dtype, 7);  // DT_STRING
  EXPECT_THAT(value.tensor->strings, ElementsAre("lr 0.1 *diverged*"));
}

TEST(EventLog, AnImageIsAPngWithItsSizeAndColourSpace) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "host", 1});
  io::Image image{2, 3, 3, std::vector<uint8_t>(18, 200)};
  log.image("val", "samples", 9, image, 5);
  log.flush();
  const testing::DecodedValue value = events_of(dir.file("val"))[1].values[0];
  EXPECT_EQ(value.plugin, "images");
  ASSERT_TRUE(value.image.has_value());
  EXPECT_EQ(value.image->height, 2);
  EXPECT_EQ(value.image->width, 3);
  EXPECT_EQ(value.image->colorspace, 3);
  EXPECT_EQ(value.image->encoded.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  io::Image back = io::decode_image(value.image->encoded, 0, "summary");
  EXPECT_EQ(back.pixels, image.pixels);
}

TEST(EventLog, HistogramsCarryTheirBuckets) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "host", 1});
  Histogram histogram;
  const float values[] = {1.0f, 2.0f, 2.0f};
  histogram.add(values, 3);
  log.histogram("train", "weights/fc.weight", 20, histogram, 5);
  log.flush();
  const testing::DecodedValue value = events_of(dir.file("train"))[1].values[0];
  EXPECT_EQ(value.plugin, "histograms");
  ASSERT_TRUE(value.histogram.has_value());
  EXPECT_EQ(value.histogram->num, 3);
  EXPECT_EQ(value.histogram->sum, 5);
  EXPECT_EQ(value.histogram->min, 1);
  EXPECT_EQ(value.histogram->max, 2);
  ASSERT_EQ(value.histogram->limits.size(), value.histogram->buckets.size());
  double counted = 0;
  for (double count : value.histogram->buckets) counted += count;
  EXPECT_EQ(counted, 3);
}

TEST(EventLog, HyperParametersAsTheHParamsPluginReadsThem) {
  testing::TempDir dir;
  EventLog log(dir.path(), {0, "host", 1});
  log.hparams_start({{"optimizer.lr", 0.1},
                     {"data.batch_size", 64},
                     {"model.type", "cnn"},
                     {"data.shuffle", true}},
                    {{"val", "accuracy"}, {"train", "loss"}}, "fashion", 100);
  log.hparams_end(SessionStatus::kSuccess, 0);
  std::vector<DecodedEvent> events = events_of(dir.path());
  ASSERT_EQ(events.size(), 4u);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(events[i].values[0].plugin, "hparams");
  testing::DecodedHParams experiment = testing::decode_hparams(events[1].values[0].plugin_content);
  EXPECT_EQ(experiment.kind, "experiment");
  EXPECT_THAT(experiment.hparam_names,
              ElementsAre("data.batch_size", "data.shuffle", "model.type", "optimizer.lr"));
  EXPECT_THAT(experiment.metrics, ElementsAre(Pair("val", "accuracy"), Pair("train", "loss")));
  testing::DecodedHParams start = testing::decode_hparams(events[2].values[0].plugin_content);
  EXPECT_EQ(start.kind, "session_start_info");
  EXPECT_EQ(start.hparams.at("optimizer.lr"), "0.1");
  EXPECT_EQ(start.hparams.at("data.batch_size"), "64");
  EXPECT_EQ(start.hparams.at("model.type"), "cnn");
  EXPECT_EQ(start.hparams.at("data.shuffle"), "true");
  EXPECT_EQ(start.time_secs, 100);
  // Byte for byte what tensorboardX writes for a successful session (docs/formats.md §3.5).
  EXPECT_EQ(events[3].values[0].plugin_content, std::string("\x22\x02\x08\x01", 4));
  // TensorBoard's own writer puts an empty float tensor beside the plugin data.
  ASSERT_TRUE(events[3].values[0].tensor.has_value());
  EXPECT_EQ(events[3].values[0].tensor->shape, std::vector<int64_t>{0});
}

TEST(EventLog, ConfigLeavesBecomeDottedHyperParameters) {
  Json config = Json::parse(R"({"optimizer": {"type": "sgd", "lr": 0.1}, "metrics": ["a", "b"],
                                "seed": 3, "scheduler": null})");
  EXPECT_THAT(flatten_hparams(config),
              ElementsAre(Pair("metrics", Json("[\"a\",\"b\"]")), Pair("optimizer.lr", Json(0.1)),
                          Pair("optimizer.type", Json("sgd")), Pair("seed", Json(3))));
}

TEST(EventLog, ADirectoryThatCannotBeMadeIsAnIoErrorNamingIt) {
  testing::TempDir dir;
  std::string file = dir.write("taken", "not a directory");
  EventLog log(file, {0, "host", 1});
  try {
    log.scalar("train", "loss", 1, 1.0, 1);
    ADD_FAILURE() << "wrote under a file";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("taken/train"));
  }
}

}  // namespace
}  // namespace kiln::tensorboard
