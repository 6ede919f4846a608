#include "kiln/io/example.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "kiln/core/error.h"
#include "kiln/io/protobuf_wire.h"

namespace kiln::io {
namespace {

// Field numbers of feature.proto and example.proto.
constexpr uint32_t kListValue = 1;                                  // BytesList/FloatList/Int64List
constexpr uint32_t kBytesList = 1, kFloatList = 2, kInt64List = 3;  // Feature.kind
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;                  // map entries
constexpr uint32_t kMapEntry = 1;                                   // Features, FeatureLists
constexpr uint32_t kFeatureListFeature = 1;                         // FeatureList
constexpr uint32_t kExampleFeatures = 1;                            // Example
constexpr uint32_t kContext = 1, kFeatureLists = 2;                 // SequenceExample

void expect_type(WireType actual, WireType expected, uint32_t field, const char* message,
                 int64_t offset) {
  if (actual != expected)
    throw WireError{offset, fmt::format("field {} of {} has wire type {}, expected {}", field,
                                        message, int(actual), int(expected))};
}

// A nested message: the reader over its payload, offsets kept absolute.
WireReader nested(WireReader& reader) {
  int64_t at = 0;
  std::string_view payload = reader.read_bytes(at);
  return WireReader(payload, at);
}

void read_floats(WireReader& list, WireType type, std::vector<float>& out) {
  auto append = [&out](uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    out.push_back(value);
  };
  if (type == WireType::kFixed32) return append(list.read_fixed32());
  expect_type(type, WireType::kLengthDelimited, kListValue, "FloatList", list.offset());
  WireReader packed = nested(list);
  while (!packed.done()) append(packed.read_fixed32());
}

void read_ints(WireReader& list, WireType type, std::vector<int64_t>& out) {
  if (type == WireType::kVarint) return out.push_back(static_cast<int64_t>(list.read_varint()));
  expect_type(type, WireType::kLengthDelimited, kListValue, "Int64List", list.offset());
  WireReader packed = nested(list);
  while (!packed.done()) out.push_back(static_cast<int64_t>(packed.read_varint()));
}

// One BytesList/FloatList/Int64List into `feature`; fields other than `value` are skipped.
void read_list(WireReader list, Feature& feature) {
  while (!list.done()) {
    WireType type;
    uint32_t field = list.read_key(type);
    if (field != kListValue) {
      list.skip(type);
    } else if (feature.kind == Feature::Kind::kBytes) {
      expect_type(type, WireType::kLengthDelimited, field, "BytesList", list.offset());
      int64_t at = 0;
      feature.bytes.emplace_back(list.read_bytes(at));
    } else if (feature.kind == Feature::Kind::kFloat) {
      read_floats(list, type, feature.floats);
    } else {
      read_ints(list, type, feature.ints);
    }
  }
}

Feature::Kind kind_of_field(uint32_t field) {
  return field == kBytesList   ? Feature::Kind::kBytes
         : field == kFloatList ? Feature::Kind::kFloat
                               : Feature::Kind::kInt64;
}

// Calls `on_message(field, reader of its payload)` for each field of the message that is one of
// `fields`, all of them sub-messages or strings; other fields are skipped, as protobuf skips
// unknown fields.
template <class OnMessage>
void for_each_message(WireReader reader, std::initializer_list<uint32_t> fields,
                      const char* message, OnMessage on_message) {
  while (!reader.done()) {
    WireType type;
    uint32_t field = reader.read_key(type);
    if (std::find(fields.begin(), fields.end(), field) == fields.end()) {
      reader.skip(type);
      continue;
    }
    expect_type(type, WireType::kLengthDelimited, field, message, reader.offset());
    on_message(field, nested(reader));
  }
}

// Reads into `feature`, emptied first; its lists keep their memory for the values.
void read_feature_into(WireReader reader, Feature& feature) {
  clear_values(feature);
  for_each_message(reader, {kBytesList, kFloatList, kInt64List}, "Feature",
                   [&feature](uint32_t field, WireReader list) {
                     // A oneof: a different kind replaces the value, the same kind merges.
                     if (feature.kind != kind_of_field(field)) {
                       clear_values(feature);
                       feature.kind = kind_of_field(field);
                     }
                     read_list(list, feature);
                   });
}

Feature read_feature(WireReader reader) {
  Feature feature;
  read_feature_into(reader, feature);
  return feature;
}

// Reads the entries of a map<string, V> message, calling `read_value(key, reader)` per entry.
template <class ReadValue>
void read_map(WireReader reader, const char* message, ReadValue read_value) {
  for_each_message(reader, {kMapEntry}, message, [&read_value](uint32_t, WireReader entry) {
    std::string key;
    WireReader value("", entry.offset());
    for_each_message(entry, {kEntryKey, kEntryValue}, "a map entry",
                     [&](uint32_t field, WireReader payload) {
                       if (field == kEntryKey) key.assign(payload.bytes());
                       if (field == kEntryValue) value = payload;
                     });
    try {
      read_value(key, value);
    } catch (WireError& e) {
      e.problem = "in feature \"" + key + "\": " + e.problem;
      throw;
    }
  });
}

void read_features(WireReader reader, Features& out) {
  read_map(reader, "Features", [&out](const std::string& key, WireReader value) {
    out[key] = read_feature(value);  // a repeated key: the last entry wins, as in protobuf maps
  });
}

void read_feature_lists(WireReader reader, std::map<std::string, std::vector<Feature>>& out) {
  read_map(reader, "FeatureLists", [&out](const std::string& key, WireReader value) {
    std::vector<Feature>& list = out[key];
    list.clear();
    for_each_message(
        value, {kFeatureListFeature}, "FeatureList",
        [&list](uint32_t, WireReader feature) { list.push_back(read_feature(feature)); });
  });
}

template <class Parse>
auto parse_with_location(std::string_view bytes, const RecordLocation& where, const char* what,
                         Parse parse) {
  try {
    return parse(WireReader(bytes));
  } catch (const WireError& e) {
    int64_t offset = (where.offset >= 0 ? where.offset : 0) + e.offset;
    throw DataError(where.file, where.record, offset,
                    fmt::format("malformed {}: {}", what, e.problem));
  }
}

}  // namespace

void clear_values(Feature& feature) {
  feature.kind = Feature::Kind::kNone;
  feature.bytes.clear();
  feature.floats.clear();
  feature.ints.clear();
}

Example parse_example(std::string_view bytes, const RecordLocation& where) {
  return parse_with_location(bytes, where, "tf.Example", [](WireReader reader) {
    Example example;
    for_each_message(reader, {kExampleFeatures}, "Example",
                     [&example](uint32_t, WireReader f) { read_features(f, example.features); });
    return example;
  });
}

void parse_example_into(std::string_view bytes, Example& example, const RecordLocation& where) {
  for (auto& [name, feature] : example.features) clear_values(feature);
  parse_with_location(bytes, where, "tf.Example", [&example](WireReader reader) {
    for_each_message(reader, {kExampleFeatures}, "Example", [&example](uint32_t, WireReader f) {
      read_map(f, "Features", [&example](const std::string& key, WireReader value) {
        read_feature_into(value, example.features[key]);
      });
    });
    return 0;
  });
}

SequenceExample parse_sequence_example(std::string_view bytes, const RecordLocation& where) {
  return parse_with_location(bytes, where, "tf.SequenceExample", [](WireReader reader) {
    SequenceExample example;
    for_each_message(reader, {kContext, kFeatureLists}, "SequenceExample",
                     [&example](uint32_t field, WireReader message) {
                       if (field == kContext) read_features(message, example.context);
                       if (field == kFeatureLists)
                         read_feature_lists(message, example.feature_lists);
                     });
    return example;
  });
}

}  // namespace kiln::io
