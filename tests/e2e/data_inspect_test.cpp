// End-to-end: `kiln data inspect` on the real TFRecord files of tests/data, and on files
// that are not TFRecords or are damaged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/json.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }
std::string testdata(const std::string& name) { return std::string(KILN_TESTDATA) + "/" + name; }

Json inspect_json(const std::string& file) {
  auto result = testing::run_command(kiln("data inspect --json " + file));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return Json::parse(result.out);  // exactly one JSON object, nothing else
}

TEST(DataInspect, ReportsEveryTestdataTfRecordAsItsExpectedJsonDescribes) {
  for (const char* name : {"tfrecord_lite_test.tfrecord", "tfx_penguin_train.tfrecord.gz"}) {
    SCOPED_TRACE(name);
    Json expected = Json::parse(io::read_file_bytes(testdata(name) + ".expected.json"));
    Json report = inspect_json(testdata(name));
    EXPECT_EQ(report["records"], expected["num_records"]);
    std::string compression = expected["compression"];
    for (auto& c : compression) c = static_cast<char>(std::tolower(c));
    EXPECT_EQ(report["compression"], compression);
    EXPECT_EQ(report["kind"], "example");
    for (const auto& [key, description] : expected["features"].items()) {
      EXPECT_EQ(report["features"][key]["type"], description["kind"][0]) << key;
      EXPECT_EQ(report["features"][key]["max_len"], description["value_counts_seen"][0]) << key;
    }
    for (const auto& [key, description] : expected["first_record"].items())
      EXPECT_EQ(report["first"][key].size(), description["num_values"].get<size_t>()) << key;
  }
}

TEST(DataInspect, PrintsATableWithoutJson) {
  auto result =
      testing::run_command(kiln("data inspect " + testdata("tfrecord_lite_test.tfrecord")));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("42 records, compression none, tf.Example"));
  EXPECT_THAT(result.out, HasSubstr("feature2: [\"chicken\"]"));
}

TEST(DataInspect, ANonTfRecordFileIsADataErrorWithExitCode1) {
  testing::TempDir dir;
  std::string path = dir.write("notes.txt", "plain text, not records\n");
  auto result = testing::run_command(kiln("data inspect " + path));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr(path));
  EXPECT_THAT(result.err, HasSubstr("record 0, byte offset 0"));
}

TEST(DataInspect, ACorruptRecordIsNamedWithItsOffset) {
  testing::TempDir dir;
  std::string bytes = io::read_file_bytes(testdata("tfrecord_lite_test.tfrecord"));
  bytes[12 + 87 + 4 + 12 + 5] ^= 0x20;  // inside the data of record 1, which starts at 103
  std::string path = dir.write("damaged.tfrecord", bytes);
  auto result = testing::run_command(kiln("data inspect --json " + path));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("record 1, byte offset 103"));
  EXPECT_THAT(result.err, HasSubstr("data CRC mismatch"));
  EXPECT_TRUE(result.out.empty());
}

TEST(DataInspect, AnUnknownCompressionIsAUsageError) {
  auto result = testing::run_command(
      kiln("data inspect --compression lz4 " + testdata("tfrecord_lite_test.tfrecord")));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("lz4"));
}

}  // namespace
}  // namespace kiln
