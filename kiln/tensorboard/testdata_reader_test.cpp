// Tests of the independent event file decoder (tests/support/event_file_reader.h) against event
// files written by TensorFlow and plugin content written by tensorboardX (tests/data), so
// that the decoder can be trusted when it checks kiln's writer.

#include "tests/support/event_file_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace kiln::testing {
namespace {

const std::string kTestdata = KILN_TESTDATA;
const std::string kTf2Scalars = kTestdata + "/tf2_scalars.tfevents";
const std::string kRustboard = kTestdata + "/tensorboard_rustboard_scalar_accuracy.tfevents";
const std::string kHParams = kTestdata + "/tensorboardX_expect/hparams_";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_bytes(path));
}

std::string hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

// The message of the std::runtime_error `action` throws, "" when it throws nothing.
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// ---- A minimal protobuf encoder, to build messages the testdata files do not hold ----------

std::string varint(uint64_t value) {
  std::string out;
  for (; value >= 0x80; value >>= 7) out += static_cast<char>((value & 0x7f) | 0x80);
  return out + static_cast<char>(value);
}

std::string little_endian(uint64_t bits, int size) {
  std::string out;
  for (int i = 0; i < size; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
  return out;
}

std::string key(int number, int wire_type) { return varint(uint64_t(number) << 3 | wire_type); }
std::string message(int number, const std::string& payload) {
  return key(number, 2) + varint(payload.size()) + payload;
}
std::string varint_field(int number, uint64_t value) { return key(number, 0) + varint(value); }
std::string double_bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return little_endian(bits, 8);
}
std::string double_field(int number, double value) { return key(number, 1) + double_bits(value); }
std::string float_field(int number, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return key(number, 5) + little_endian(bits, 4);
}

// ---- Framing and CRC -----------------------------------------------------------------------

uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

TEST(EventFileReader, MaskedCrcMatchesTheSpecVectors) {
  EXPECT_EQ(tfrecord_masked_crc("123456789"), mask(0xE3069283u));
  EXPECT_EQ(tfrecord_masked_crc(std::string(32, '\0')), mask(0x8A9136AAu));
  EXPECT_EQ(tfrecord_masked_crc("\x1a\x11"
                                "CRC test, one two"),
            0x5794D08Au);
  EXPECT_EQ(tfrecord_masked_crc(little_endian(0x57, 8)), 0x8C94BAE6u);
  EXPECT_EQ(tfrecord_masked_crc(little_endian(0x18, 8)), 0x224b7fa3u);
  EXPECT_EQ(tfrecord_masked_crc(little_endian(0x32, 8)), 0xec561924u);
}

TEST(EventFileReader, ReadsTheTf2ScalarsFileAsItsExpectedFileStates) {
  const nlohmann::json expected = read_json(kTf2Scalars + ".expected.json");
  const std::vector<std::string> records = read_tfrecords(kTf2Scalars);
  ASSERT_EQ(records.size(), expected["num_records"].get<size_t>());
  ASSERT_EQ(records.size(), 101u);
  EXPECT_EQ(hex(records[0]), expected["first_record_hex"].get<std::string>());

  const std::vector<DecodedEvent> events = read_event_file(kTf2Scalars);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].wall_time, 1585499054.0);
  EXPECT_EQ(events[0].step, 0);
  EXPECT_TRUE(events[0].values.empty());
  EXPECT_EQ(events[0].session_status, -1);
  const nlohmann::json& points = expected["all_scalar_points"];  // [step, wall_time, value]
  ASSERT_EQ(points.size(), 100u);
  for (size_t k = 0; k < points.size(); ++k) {
    const DecodedEvent& event = events[k + 1];
    SCOPED_TRACE("event " + std::to_string(k + 1));
    EXPECT_EQ(event.step, static_cast<int64_t>(k));
    EXPECT_EQ(event.step, points[k][0].get<int64_t>());
    EXPECT_EQ(event.wall_time, points[k][1].get<double>());
    ASSERT_EQ(event.values.size(), 1u);
    const DecodedValue& value = event.values[0];
    EXPECT_EQ(value.tag, "my_metric");
    EXPECT_EQ(value.plugin, "scalars");
    EXPECT_EQ(value.plugin_content, "");
    ASSERT_TRUE(value.tensor.has_value());
    EXPECT_EQ(value.tensor->dtype, 1);
    EXPECT_TRUE(value.tensor->has_shape);
    EXPECT_TRUE(value.tensor->shape.empty());
    EXPECT_EQ(value.tensor->content.size(), 4u);
    EXPECT_FALSE(value.simple_value.has_value());
    EXPECT_EQ(scalar_of(value), 0.5 * static_cast<double>(k));
    EXPECT_EQ(scalar_of(value), points[k][2].get<double>());
  }
}

TEST(EventFileReader, ReadsTheRustboardAccuracyFile) {
  const std::vector<DecodedEvent> events = read_event_file(kRustboard);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].wall_time, 1599759586.0);
  EXPECT_EQ(events[1].step, 77);
  EXPECT_EQ(events[1].wall_time, 1599759606.859727);
  ASSERT_EQ(events[1].values.size(), 1u);
  EXPECT_EQ(events[1].values[0].tag, "accuracy");
  EXPECT_EQ(events[1].values[0].plugin, "scalars");
  EXPECT_EQ(hex(events[1].values[0].tensor->content), "a4707d3f");
  EXPECT_EQ(scalar_of(events[1].values[0]), static_cast<double>(0.99f));
}

TEST(EventFileReader, ReportsAFlippedByteWithFileAndRecord) {
  TempDir dir;
  std::string bytes = read_bytes(kTf2Scalars);
  bytes[40 + 12 + 5] ^= 0x01;  // record 0 takes 12 + 24 + 4 bytes; this is record 1's data
  const std::string data_flipped = dir.write("data.tfevents", bytes);
  std::string error = error_of([&] { read_tfrecords(data_flipped); });
  EXPECT_NE(error.find(data_flipped), std::string::npos) << error;
  EXPECT_NE(error.find("record 1 "), std::string::npos) << error;
  EXPECT_NE(error.find("data CRC"), std::string::npos) << error;

  bytes = read_bytes(kTf2Scalars);
  bytes[40 + 2] ^= 0x10;  // record 1's length
  const std::string length_flipped = dir.write("length.tfevents", bytes);
  error = error_of([&] { read_event_file(length_flipped); });
  EXPECT_NE(error.find("record 1 "), std::string::npos) << error;
  EXPECT_NE(error.find("length CRC"), std::string::npos) << error;
}

TEST(EventFileReader, ReportsATruncatedFileWithFileAndRecord) {
  TempDir dir;
  const std::string bytes = read_bytes(kTf2Scalars);
  const std::string short_tail = dir.write("tail.tfevents", bytes.substr(0, bytes.size() - 3));
  std::string error = error_of([&] { read_tfrecords(short_tail); });
  EXPECT_NE(error.find(short_tail), std::string::npos) << error;
  EXPECT_NE(error.find("record 100 "), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;

  const std::string short_header = dir.write("header.tfevents", bytes.substr(0, 40 + 5));
  error = error_of([&] { read_tfrecords(short_header); });
  EXPECT_NE(error.find("record 1 "), std::string::npos) << error;
  EXPECT_NE(error.find("truncated header"), std::string::npos) << error;
}

// ---- Wire format ---------------------------------------------------------------------------

TEST(EventFileReader, ParseWireRejectsMalformedMessages) {
  EXPECT_THROW(parse_wire("\x08\x96"), std::runtime_error);  // varint cut short
  EXPECT_THROW(parse_wire("\x0a\x05"
                          "ab"),
               std::runtime_error);                                          // length past the end
  EXPECT_THROW(parse_wire("\x09\x01\x02"), std::runtime_error);              // fixed64 cut short
  EXPECT_THROW(parse_wire(std::string("\x0b", 1)), std::runtime_error);      // start group
  EXPECT_THROW(parse_wire(std::string("\x0f", 1)), std::runtime_error);      // wire type 7
  EXPECT_THROW(parse_wire(std::string("\x02\x00", 2)), std::runtime_error);  // field number 0
  EXPECT_THROW(packed_doubles("1234567"), std::runtime_error);
  EXPECT_THROW(packed_varints("\x80"), std::runtime_error);
  EXPECT_THROW(as_double(parse_wire(varint_field(1, 5))[0]), std::runtime_error);
}

TEST(EventFileReader, ParseWireKeepsFieldsInOrder) {
  const std::string bytes = varint_field(2, 300) + double_field(1, 2.5) + message(9, "xy") +
                            float_field(15, -1.5f) + varint_field(3, uint64_t(-7));
  const std::vector<WireField> fields = parse_wire(bytes);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0].number, 2);
  EXPECT_EQ(fields[0].varint, 300u);
  EXPECT_EQ(as_double(fields[1]), 2.5);
  EXPECT_EQ(fields[2].wire_type, 2);
  EXPECT_EQ(fields[2].bytes, "xy");
  EXPECT_EQ(as_float(fields[3]), -1.5f);
  EXPECT_EQ(static_cast<int64_t>(fields[4].varint), -7);
  EXPECT_EQ(packed_varints(varint(1) + varint(300) + varint(0)),
            (std::vector<uint64_t>{1, 300, 0}));
  EXPECT_EQ(packed_floats(std::string("\x00\x00\x00\x3f", 4)), std::vector<float>{0.5f});
}

// ---- Typed decoding of what the testdata files do not hold ---------------------------------

// Values of tensorboardX_expect/test_summary.test_histogram_fd.expect.
const std::vector<double> kLimits = {0.0005459648969956543, 0.1822300763915356, 0.36391418788607555,
                                     0.5455982993806154,    0.7272824108751554, 0.9089665223696954,
                                     0.9998085781169653};
const std::vector<double> kBuckets = {0, 190, 192, 195, 178, 169, 100};

// Limits packed, buckets one field each: both encodings are valid protobuf.
std::string histogram_proto() {
  std::string histo = double_field(1, kLimits.front()) + double_field(2, kLimits.back()) +
                      double_field(3, 1024) + double_field(4, 506.74752192429736) +
                      double_field(5, 337.2470761005681);
  std::string limits;
  for (double limit : kLimits) limits += double_bits(limit);
  histo += message(6, limits);
  for (double bucket : kBuckets) histo += double_field(7, bucket);
  return histo;
}

TEST(EventFileReader, DecodesLegacyHistogramImageAndSimpleValue) {
  const std::string png = read_bytes(kTestdata + "/tensorboardX_expect/test_uint8_image.png");
  const std::string image =
      varint_field(1, 32) + varint_field(2, 32) + varint_field(3, 3) + message(4, png);
  const std::string summary = message(1, message(1, "dummy") + message(5, histogram_proto())) +
                              message(1, message(1, "img") + message(4, image)) +
                              message(1, message(1, "loss") + float_field(2, 0.25f));
  const DecodedEvent event = decode_event(double_field(1, 7.5) + varint_field(2, 3) +
                                          message(5, summary) + varint_field(99, 1));
  EXPECT_EQ(event.wall_time, 7.5);
  EXPECT_EQ(event.step, 3);
  ASSERT_EQ(event.values.size(), 3u);
  const DecodedHistogram& histo = event.values[0].histogram.value();
  EXPECT_EQ(histo.num, 1024);
  EXPECT_EQ(histo.min, kLimits.front());
  EXPECT_EQ(histo.sum_squares, 337.2470761005681);
  EXPECT_EQ(histo.limits, kLimits);
  EXPECT_EQ(histo.buckets, kBuckets);
  const DecodedImage& decoded_image = event.values[1].image.value();
  EXPECT_EQ(decoded_image.height, 32);
  EXPECT_EQ(decoded_image.width, 32);
  EXPECT_EQ(decoded_image.colorspace, 3);
  EXPECT_EQ(decoded_image.encoded, png);
  EXPECT_EQ(png.size(), 124u);
  EXPECT_EQ(scalar_of(event.values[2]), 0.25);
  EXPECT_THROW(scalar_of(event.values[0]), std::runtime_error);
}

TEST(EventFileReader, DecodesSessionLogAndSourceMetadata) {
  const DecodedEvent event =
      decode_event(message(7, varint_field(1, 2)) + message(10, message(1, "kiln.writer")));
  EXPECT_EQ(event.session_status, 2);
  EXPECT_EQ(event.source_writer, "kiln.writer");
  EXPECT_EQ(decode_event(message(7, "")).session_status, 0);
}

TEST(EventFileReader, ScalarOfReadsDoublesAndRejectsNonScalars) {
  const std::string shape_1 = message(2, message(2, varint_field(1, 1)));
  const auto value_of = [](const std::string& tensor) {
    return decode_event(message(5, message(1, message(1, "t") + message(8, tensor)))).values[0];
  };
  EXPECT_EQ(scalar_of(value_of(varint_field(1, 2) + message(4, double_bits(0.1)))), 0.1);
  EXPECT_EQ(scalar_of(value_of(varint_field(1, 2) + double_field(6, 0.2))), 0.2);
  EXPECT_EQ(scalar_of(value_of(varint_field(1, 1) + float_field(5, 1.5f))), 1.5);
  EXPECT_THROW(scalar_of(value_of(varint_field(1, 1) + shape_1 + float_field(5, 1.5f))),
               std::runtime_error);
  EXPECT_THROW(scalar_of(value_of(varint_field(1, 7) + message(8, "a"))), std::runtime_error);
  EXPECT_THROW(scalar_of(value_of(varint_field(1, 1) + message(4, "abc"))), std::runtime_error);
}

TEST(EventFileReader, ListsEventFilesSortedByName) {
  TempDir dir;
  dir.write("events.out.tfevents.0000000002.host", "");
  dir.write("events.out.tfevents.0000000001.host", "");
  dir.write("notes.txt", "");
  dir.write("tfevents_folder/inner", "");
  EXPECT_EQ(event_files_in(dir.path()),
            (std::vector<std::string>{dir.file("events.out.tfevents.0000000001.host"),
                                      dir.file("events.out.tfevents.0000000002.host")}));
  EXPECT_THROW(event_files_in(dir.file("missing")), std::runtime_error);
}

// ---- HParams plugin content written by tensorboardX (docs/formats.md §3.5)
// -------------------------

TEST(EventFileReader, DecodesTensorboardXHParamsExperiment) {
  const DecodedHParams decoded =
      decode_hparams(read_bytes(kHParams + "experiment.plugin_content.bin"));
  EXPECT_EQ(decoded.kind, "experiment");
  EXPECT_EQ(decoded.hparam_names, (std::vector<std::string>{"lr", "bsize"}));
  const std::vector<std::pair<std::string, std::string>> metrics = {{"", "accuracy"}, {"", "loss"}};
  EXPECT_EQ(decoded.metrics, metrics);
  EXPECT_TRUE(decoded.hparams.empty());
}

TEST(EventFileReader, DecodesTensorboardXHParamsSessionStart) {
  const DecodedHParams decoded =
      decode_hparams(read_bytes(kHParams + "session_start_info.plugin_content.bin"));
  EXPECT_EQ(decoded.kind, "session_start_info");
  const std::map<std::string, std::string> hparams = {{"lr", "0.1"}, {"bsize", "4"}};
  EXPECT_EQ(decoded.hparams, hparams);
  EXPECT_EQ(decoded.status, -1);
}

TEST(EventFileReader, DecodesTensorboardXHParamsSessionEnd) {
  const DecodedHParams decoded =
      decode_hparams(read_bytes(kHParams + "session_end_info.plugin_content.bin"));
  EXPECT_EQ(decoded.kind, "session_end_info");
  EXPECT_EQ(decoded.status, 1);  // STATUS_SUCCESS
}

TEST(EventFileReader, PrintsStringAndBoolHParamsAndRejectsEmptyContent) {
  const auto entry = [](const std::string& name, const std::string& value) {
    return message(1, message(1, name) + message(2, value));
  };
  const std::string start = entry("opt", message(3, "adam")) + entry("ema", varint_field(4, 1)) +
                            entry("none", varint_field(1, 0)) + double_field(5, 12.5);
  const DecodedHParams decoded = decode_hparams(message(3, start));
  const std::map<std::string, std::string> hparams = {
      {"opt", "adam"}, {"ema", "true"}, {"none", "null"}};
  EXPECT_EQ(decoded.hparams, hparams);
  EXPECT_EQ(decoded.time_secs, 12.5);
  EXPECT_THROW(decode_hparams(""), std::runtime_error);
  EXPECT_THROW(decode_hparams(message(3, entry("x", ""))), std::runtime_error);
}

}  // namespace
}  // namespace kiln::testing
