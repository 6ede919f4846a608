#include "kiln/io/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

template <class T>
IdxArray make_array(IdxType type, std::vector<int64_t> dims, const std::vector<T>& values) {
  IdxArray array;
  array.type = type;
  array.dims = std::move(dims);
  array.data.resize(values.size() * sizeof(T));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

template <class T>
std::vector<T> values_of(const IdxArray& array) {
  std::vector<T> out(array.data.size() / sizeof(T));
  std::memcpy(out.data(), array.data.data(), array.data.size());
  return out;
}

std::string gzip(const std::string& raw) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&stream, raw.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = static_cast<uInt>(raw.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// The DataError parsing `data` throws; fails the test when there is none.
DataError parse_error(const std::string& data, const std::string& name) {
  try {
    parse_idx(data, name);
  } catch (const DataError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << data.size() << " bytes";
  return DataError(name, -1, -1, "none");
}

TEST(Idx, EncodesUint8InTheDocumentedLayout) {
  IdxArray labels = make_array<uint8_t>(IdxType::kUint8, {4}, {9, 0, 255, 3});
  std::string encoded = encode_idx(labels);
  EXPECT_EQ(encoded, bytes({0, 0, 0x08, 1, 0, 0, 0, 4, 9, 0, 255, 3}));
  IdxArray back = parse_idx(encoded, "labels.idx");
  EXPECT_EQ(back.type, IdxType::kUint8);
  EXPECT_EQ(back.dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(back.data, labels.data);
  EXPECT_EQ(back.element_count(), 4);
}

TEST(Idx, MultiByteElementsAreBigEndianOnDiskAndNativeInMemory) {
  IdxArray ints = make_array<int32_t>(IdxType::kInt32, {2, 1}, {0x01020304, -2});
  std::string encoded = encode_idx(ints);
  EXPECT_EQ(encoded, bytes({0, 0, 0x0C, 2, 0,    0,    0,    2,   0, 0, 0, 1,  // magic, dims
                            1, 2, 3,    4, 0xff, 0xff, 0xff, 0xfe}));
  IdxArray back = parse_idx(encoded, "ints.idx");
  EXPECT_EQ(back.dims, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values_of<int32_t>(back), (std::vector<int32_t>{0x01020304, -2}));

  IdxArray floats = make_array<float>(IdxType::kFloat32, {3}, {1.0f, -0.5f, 3.25f});
  encoded = encode_idx(floats);
  EXPECT_EQ(encoded.substr(8, 4), bytes({0x3f, 0x80, 0, 0}));  // 1.0f big-endian
  EXPECT_EQ(values_of<float>(parse_idx(encoded, "f.idx")),
            (std::vector<float>{1.0f, -0.5f, 3.25f}));

  IdxArray doubles = make_array<double>(IdxType::kFloat64, {1}, {-2.0});
  EXPECT_EQ(encode_idx(doubles).substr(8), bytes({0xc0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values_of<double>(parse_idx(encode_idx(doubles), "d.idx")), std::vector<double>{-2.0});
  IdxArray shorts = make_array<int16_t>(IdxType::kInt16, {2}, {0x0102, -1});
  EXPECT_EQ(encode_idx(shorts).substr(8), bytes({1, 2, 0xff, 0xff}));
}

TEST(Idx, ReadsRawAndGzippedFiles) {
  testing::TempDir dir;
  IdxArray images =
      make_array<uint8_t>(IdxType::kUint8, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  std::string raw = encode_idx(images);
  IdxArray from_raw = read_idx(dir.write("images.idx", raw));
  IdxArray from_gzip = read_idx(dir.write("images.idx.gz", gzip(raw)));
  for (const IdxArray* array : {&from_raw, &from_gzip}) {
    EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 2, 3}));
    EXPECT_EQ(array->data, images.data);
  }
  EXPECT_THROW(read_idx(dir.file("missing.idx")), IoError);
}

TEST(Idx, TruncationAtEveryOffsetIsADataErrorNamingFileAndOffset) {
  std::string full = encode_idx(make_array<int32_t>(IdxType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  for (size_t cut = 0; cut < full.size(); ++cut) {
    DataError e = parse_error(full.substr(0, cut), "small.idx");
    EXPECT_EQ(e.file(), "small.idx");
    EXPECT_GE(e.offset(), 0) << "cut at " << cut;
    EXPECT_LE(e.offset(), static_cast<int64_t>(cut)) << "cut at " << cut;
    EXPECT_THAT(e.what(), HasSubstr("small.idx")) << "cut at " << cut;
    EXPECT_THAT(e.what(), HasSubstr("byte offset")) << "cut at " << cut;
  }
}

TEST(Idx, TruncatedGzipFilesAreDataErrorsNamingTheFile) {
  testing::TempDir dir;
  std::string compressed =
      gzip(encode_idx(make_array<uint8_t>(IdxType::kUint8, {5}, {1, 2, 3, 4, 5})));
  for (size_t cut = 0; cut < compressed.size(); ++cut) {
    std::string path =
        dir.write("cut" + std::to_string(cut) + ".idx.gz", compressed.substr(0, cut));
    try {
      read_idx(path);
      ADD_FAILURE() << "no error at cut " << cut;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr(path)) << "cut at " << cut;
      EXPECT_THAT(e.what(), HasSubstr("byte offset")) << "cut at " << cut;
    }
  }
}

TEST(Idx, WrongMagicIsADataErrorAtOffsetZero) {
  std::string good = encode_idx(make_array<uint8_t>(IdxType::kUint8, {1}, {7}));
  const std::string bad_magics[] = {
      bytes({1, 0, 0x08, 1}),  // first byte not zero
      bytes({0, 1, 0x08, 1}),  // second byte not zero
      bytes({0, 0, 0x07, 1}),  // unknown type code
      bytes({0, 0, 0x08, 0}),  // no dimensions
      "PK\x03\x04",            // some other file
  };
  for (const auto& magic : bad_magics) {
    DataError e = parse_error(magic + good.substr(4), "labels.idx");
    EXPECT_EQ(e.offset(), 0);
    EXPECT_THAT(e.what(), HasSubstr("labels.idx"));
    EXPECT_THAT(e.what(), HasSubstr("byte offset 0"));
    EXPECT_THAT(e.what(), HasSubstr("wrong magic"));
  }
}

TEST(Idx, TrailingBytesAreADataError) {
  std::string good = encode_idx(make_array<uint8_t>(IdxType::kUint8, {2}, {7, 8}));
  DataError e = parse_error(good + "xyz", "labels.idx");
  EXPECT_EQ(e.offset(), static_cast<int64_t>(good.size()));
  EXPECT_THAT(e.what(), HasSubstr("labels.idx"));
  EXPECT_THAT(e.what(), HasSubstr("3 unexpected bytes after the data"));
}

TEST(Idx, HugeDimensionsAreReportedNotAllocated) {
  std::string header = bytes(
      {0, 0, 0x0D, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  DataError e = parse_error(header + "abcd", "huge.idx");
  EXPECT_THAT(e.what(), HasSubstr("truncated"));
}

TEST(Idx, ReadsTheFashionMnistTestLabels) {
  const std::string path = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  IdxArray labels = read_idx(path);
  ASSERT_EQ(labels.dims, (std::vector<int64_t>{10000}));
  std::vector<int> per_class(10);
  for (uint8_t label : labels.data) {
    ASSERT_LT(label, 10);
    ++per_class[label];
  }
  EXPECT_EQ(per_class, std::vector<int>(10, 1000));
}

// Fuzzing found this (tests/fuzz/regressions/fuzz_idx): an empty array whose other dimensions
// multiply past int64.
TEST(Idx, DimensionsWhoseProductOverflowsAreADataError) {
  std::string data = bytes({0, 0, 0x08, 4});
  for (int i = 0; i < 3; ++i) data += bytes({0xff, 0xff, 0xff, 0xff});
  data += bytes({0, 0, 0, 0});
  EXPECT_THAT(parse_error(data, "huge.idx").what(),
              HasSubstr("the dimensions multiply past 2^63 elements"));
}

}  // namespace
}  // namespace kiln::io
