// kiln's own event files read back (what the board and the report show of a run's images), and
// damaged ones: what comes before the damage is kept, the damage named, nothing thrown.

#include "kiln/tensorboard/event_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "kiln/core/text_file.h"
#include "kiln/io/tfrecord.h"
#include "kiln/tensorboard/event_log.h"
#include "tests/support/event_file_reader.h"
#include "tests/support/temp_dir.h"

namespace kiln::tensorboard {
namespace {

using ::testing::HasSubstr;

io::Image grey(int64_t value) {
  return io::Image{2, 3, 1, std::vector<uint8_t>(6, uint8_t(value))};
}

TEST(EventReader, ReadsTheImagesOfEveryFileInOrder) {
  testing::TempDir dir;
  {
    EventLog log(dir.path(), {0, "host", 1});
    log.image("val", "samples", 10, grey(1), 100);
    log.scalar("val", "loss", 10, 0.5, 100);
    log.restart_at(11);
    log.image("val", "samples", 20, grey(2), 101);
    log.image("val", "confusion_matrix", 20, grey(3), 101);
  }
  StoredImages read = read_images(dir.file("val"));
  EXPECT_TRUE(read.problems.empty());
  ASSERT_EQ(read.images.size(), 3u);
  EXPECT_EQ(read.images[0].tag, "samples");
  EXPECT_EQ(read.images[0].step, 10);
  EXPECT_EQ(read.images[1].step, 20);
  EXPECT_EQ(read.images[2].tag, "confusion_matrix");
  EXPECT_EQ(read.images[2].width, 3);
  EXPECT_EQ(io::decode_image(read.images[2].png, 0, "png").pixels, grey(3).pixels);
}

// A FIFO in an event file's place held the board's worker in open() until someone wrote to it.
TEST(EventReader, AnEventFileThatIsAFifoIsNamedNotWaitedFor) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("val"));
  std::string fifo = dir.file("val/events.out.tfevents.1.host");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  StoredImages images = read_images(dir.file("val"));
  EXPECT_TRUE(images.images.empty());
  ASSERT_EQ(images.problems.size(), 1u);
  EXPECT_THAT(images.problems[0], HasSubstr("not a regular file"));
  EXPECT_EQ(read_histograms(dir.file("val")).problems.size(), 1u);
}

TEST(EventReader, ADamagedFileKeepsWhatCameBeforeAndNamesTheDamage) {
  testing::TempDir dir;
  {
    EventLog log(dir.path(), {0, "host", 1});
    log.image("val", "samples", 10, grey(1), 100);
    log.image("val", "samples", 20, grey(2), 100);
  }
  std::string file = kiln::testing::event_files_in(dir.file("val")).at(0);
  std::string bytes = read_text_file(file);
  std::ofstream(file, std::ios::binary) << bytes.substr(0, bytes.size() - 10);  // cut short
  StoredImages read = read_images(dir.file("val"));
  ASSERT_EQ(read.images.size(), 1u);
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_THAT(read.problems[0], HasSubstr(file));
  EXPECT_THAT(read.problems[0], HasSubstr("record 2"));

  std::ofstream(file, std::ios::binary) << io::frame_tfrecord("not a protobuf \xff\xff\xff");
  read = read_images(dir.file("val"));
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_THAT(read.problems[0], HasSubstr("record 0, byte offset 0: not an Event"));
  EXPECT_TRUE(read_images(dir.file("missing")).images.empty());
}

}  // namespace
}  // namespace kiln::tensorboard
