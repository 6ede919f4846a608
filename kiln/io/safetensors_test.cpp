#include "kiln/io/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/text_file.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

const std::string kDir = KILN_TESTDATA "/safetensors/";

const Json& expected_fixtures() {
  static const Json fixtures =
      Json::parse(read_text_file(kDir + "safetensors_fixtures.expected.json"))["files"];
  return fixtures;
}

std::string hex(const uint8_t* data, size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 15]);
  }
  return out;
}

std::string unhex(const std::string& text) {
  std::string out;
  for (size_t i = 0; i + 1 < text.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<std::string> fixture_files(const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".safetensors")
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(SafeTensorsFixtures, EveryFileIsDescribedByTheExpectedJson) {
  auto good = fixture_files("st_"), bad = fixture_files("bad_");
  EXPECT_EQ(good.size(), 9u);
  EXPECT_EQ(bad.size(), 10u);
  for (const auto& list : {good, bad})
    for (const auto& name : list) EXPECT_TRUE(expected_fixtures().contains(name)) << name;
}

TEST(SafeTensorsFixtures, GoodFilesParseToTheExpectedTensors) {
  for (const auto& name : fixture_files("st_")) {
    SCOPED_TRACE(name);
    const Json& expected = expected_fixtures().at(name);
    ASSERT_EQ(expected.at("expect"), "ok");
    SafeTensorsFile file = read_safetensors(kDir + name);
    EXPECT_EQ(file.bytes.size(), expected.at("bytes").get<size_t>());
    ASSERT_EQ(file.tensors.size(), expected.at("tensors").size());
    for (const auto& [tensor_name, want] : expected.at("tensors").items()) {
      const SafeTensor* tensor = file.find(tensor_name);
      ASSERT_NE(tensor, nullptr) << tensor_name;
      EXPECT_EQ(tensor->name, tensor_name);
      EXPECT_EQ(tensor->dtype, want.at("dtype"));
      EXPECT_EQ(tensor->shape, want.at("shape").get<std::vector<int64_t>>());
      EXPECT_EQ(tensor->size, want.at("nbytes").get<size_t>());
      EXPECT_EQ(hex(tensor->data, tensor->size), want.at("data_hex"));
      int64_t start = expected.at("data_section_start_offset").get<int64_t>();
      EXPECT_GE(tensor->data - reinterpret_cast<const uint8_t*>(file.bytes.data()), start);
    }
    std::map<std::string, std::string> metadata;
    if (expected.at("header_json").contains("__metadata__"))
      metadata =
          expected.at("header_json").at("__metadata__").get<std::map<std::string, std::string>>();
    EXPECT_EQ(file.metadata, metadata);
    EXPECT_EQ(file.find("no such tensor"), nullptr);
  }
}

TEST(SafeTensorsFixtures, BadFilesAreDataErrorsNamingTheFile) {
  for (const auto& name : fixture_files("bad_")) {
    SCOPED_TRACE(name);
    EXPECT_THAT(expected_fixtures().at(name).at("expect").get<std::string>(), HasSubstr("error"));
    std::string path = kDir + name;
    try {
      read_safetensors(path);
      ADD_FAILURE() << "parsed without error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_THAT(e.what(), HasSubstr(path));
      EXPECT_THAT(e.what(), HasSubstr("invalid safetensors file"));
      EXPECT_GE(e.offset(), 0);
    }
  }
}

// Builds the views that describe fixture `name` from the expected json.
std::vector<SafeTensorView> views_of(const std::string& name, std::vector<std::string>& storage) {
  std::vector<SafeTensorView> views;
  storage.reserve(16);
  for (const auto& [tensor_name, want] : expected_fixtures().at(name).at("tensors").items()) {
    storage.push_back(unhex(want.at("data_hex").get<std::string>()));
    views.push_back({tensor_name, want.at("dtype").get<std::string>(),
                     want.at("shape").get<std::vector<int64_t>>(), storage.back().data(),
                     storage.back().size()});
  }
  return views;
}

TEST(SafeTensorsWriter, ReproducesTheReferenceFilesByteForByte) {
  for (const char* name :
       {"st_attn0_f32_1x2x3.safetensors", "st_empty.safetensors",
        "st_empty_metadata_framework_pt.safetensors", "st_attn0_f32_1x1x2x3_padded.safetensors",
        "st_attn0_f4_1x2.safetensors"}) {
    SCOPED_TRACE(name);
    std::vector<std::string> storage;
    std::vector<SafeTensorView> views = views_of(name, storage);
    std::map<std::string, std::string> metadata;
    const Json& header = expected_fixtures().at(name).at("header_json");
    if (header.contains("__metadata__"))
      metadata = header.at("__metadata__").get<std::map<std::string, std::string>>();
    EXPECT_EQ(serialize_safetensors(views, metadata), read_file_bytes(kDir + name));
  }
}

TEST(SafeTensorsWriter, AWrittenFileParsesBack) {
  std::vector<float> weights = {0.5f, -1.0f, 2.0f, 4.0f, 8.0f, 16.0f};
  std::vector<int64_t> steps = {7, 1LL << 40};
  std::vector<uint8_t> mask = {1, 0, 1};
  std::vector<uint16_t> half = {0x3f80};
  std::string bytes =
      serialize_safetensors({{"weight", "F32", {2, 3}, weights.data(), weights.size() * 4},
                             {"mask", "U8", {3}, mask.data(), mask.size()},
                             {"bias", "BF16", {1}, half.data(), 2},
                             {"step", "I64", {2}, steps.data(), steps.size() * 8},
                             {"nothing", "F32", {0, 4}, nullptr, 0}},
                            {{"format", "pt"}, {"kiln", "1"}});
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);  // little-endian hosts only, as kiln is
  EXPECT_EQ(header_size % 8, 0u);

  testing::TempDir dir;
  SafeTensorsFile file = read_safetensors(dir.write("model.safetensors", bytes));
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"kiln", "1"}}));
  // Data order: descending dtype width, then name.
  std::vector<std::string> order;
  for (const auto& t : file.tensors) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"step", "nothing", "weight", "bias", "mask"}));
  const SafeTensor* weight = file.find("weight");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->dtype, "F32");
  EXPECT_EQ(weight->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(weight->size, 24u);
  EXPECT_EQ(std::memcmp(weight->data, weights.data(), 24), 0);
  EXPECT_EQ(std::memcmp(file.find("step")->data, steps.data(), 16), 0);
  EXPECT_EQ(std::memcmp(file.find("mask")->data, mask.data(), 3), 0);
  EXPECT_EQ(file.find("nothing")->size, 0u);
  EXPECT_EQ(file.find("nothing")->shape, (std::vector<int64_t>{0, 4}));
}

std::string with_header(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(json.size() >> (8 * i));
  return out + json + data;
}

TEST(SafeTensorsParser, RejectsInconsistentHeaders) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
       "does not start where the previous one ends"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "does not start where"},
      {R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,8]}})", "unknown dtype"},
      {R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})", "non-integer dimension"},
      {R"({"a":{"dtype":"F32","shape":[1]}})", "needs dtype, shape and data_offsets"},
      {R"({"a":{"dtype":"F4","shape":[1],"data_offsets":[0,1]}})", "whole bytes"},
      {R"({"__metadata__":{"x":1}})", "__metadata__ must map strings to strings"},
      {R"([1, 2])", "not a JSON object"},
  };
  for (const auto& [json, problem] : cases) {
    try {
      parse_safetensors(with_header(json, std::string(8, '\0')), "case.safetensors");
      ADD_FAILURE() << "accepted " << json;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr(problem)) << json;
      EXPECT_EQ(e.file(), "case.safetensors");
    }
  }
}

// A header of 99 MB of empty objects, under the header's length limit, once took 3.1 GB: a
// header of more values and keys than a million is refused before it is built.
TEST(SafeTensors, AHeaderOfMoreValuesThanAnyFileHoldsIsRefusedUnbuilt) {
  std::string many = "{\"__metadata__\":{},\"x\":[";
  for (int i = 0; i < (1 << 20); ++i) many += "{},";
  many += "{}]}";
  try {
    parse_safetensors(with_header(many, ""), "big.safetensors");
    ADD_FAILURE() << "taken";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the header is not JSON: more than 1048576 values and keys"));
  }
}

// Fuzzing found this (tests/fuzz/regressions/fuzz_safetensors): a number too large for a double
// in the header escaped as nlohmann's out_of_range.
TEST(SafeTensors, AnOverflowingNumberInTheHeaderIsADataError) {
  std::string header = "{\"a\":1e400}";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  EXPECT_THROW(parse_safetensors(bytes + header, "n.safetensors"), DataError);
}

}  // namespace
}  // namespace kiln::io
