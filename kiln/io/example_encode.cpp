// Encoding of tf.Example / tf.SequenceExample, and the Feature value helpers.

#include <cstring>

#include "kiln/io/example.h"
#include "kiln/io/protobuf_wire.h"

namespace kiln::io {
namespace {

// Numeric lists are packed, as TensorFlow writes them; an empty list writes no field at all.
std::string encode_list(const Feature& feature) {
  WireWriter list, packed;
  switch (feature.kind) {
    case Feature::Kind::kNone:
      break;
    case Feature::Kind::kBytes:
      for (const auto& value : feature.bytes) list.bytes_field(1, value);
      break;
    case Feature::Kind::kFloat:
      for (float value : feature.floats) {
        uint32_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        packed.fixed32(bits);
      }
      break;
    case Feature::Kind::kInt64:
      for (int64_t value : feature.ints) packed.varint(static_cast<uint64_t>(value));
      break;
  }
  if (!packed.out().empty()) list.bytes_field(1, packed.out());
  return list.out();
}

std::string encode_feature(const Feature& feature) {
  WireWriter out;
  // Feature.kind field numbers: bytes_list 1, float_list 2, int64_list 3.
  if (feature.kind != Feature::Kind::kNone)
    out.bytes_field(static_cast<uint32_t>(feature.kind), encode_list(feature));
  return out.out();
}

// A map<string, V> as repeated entries {1: key, 2: value}.
template <class Map, class EncodeValue>
std::string encode_map(const Map& map, EncodeValue encode_value) {
  WireWriter out;
  for (const auto& [key, value] : map) {
    WireWriter entry;
    entry.bytes_field(1, key);
    entry.bytes_field(2, encode_value(value));
    out.bytes_field(1, entry.out());
  }
  return out.out();
}

std::string encode_features(const Features& features) {
  return encode_map(features, encode_feature);
}

}  // namespace

size_t Feature::size() const {
  switch (kind) {
    case Kind::kBytes:
      return bytes.size();
    case Kind::kFloat:
      return floats.size();
    case Kind::kInt64:
      return ints.size();
    case Kind::kNone:
      break;
  }
  return 0;
}

bool Feature::operator==(const Feature& other) const {
  return kind == other.kind && bytes == other.bytes && floats == other.floats && ints == other.ints;
}

const char* feature_kind_name(Feature::Kind kind) {
  switch (kind) {
    case Feature::Kind::kBytes:
      return "bytes_list";
    case Feature::Kind::kFloat:
      return "float_list";
    case Feature::Kind::kInt64:
      return "int64_list";
    case Feature::Kind::kNone:
      break;
  }
  return "none";
}

std::string encode_example(const Example& example) {
  WireWriter out;
  out.bytes_field(1, encode_features(example.features));
  return out.out();
}

std::string encode_sequence_example(const SequenceExample& example) {
  WireWriter out;
  out.bytes_field(1, encode_features(example.context));
  out.bytes_field(2, encode_map(example.feature_lists, [](const std::vector<Feature>& list) {
                    WireWriter features;
                    for (const auto& f : list) features.bytes_field(1, encode_feature(f));
                    return features.out();
                  }));
  return out.out();
}

Feature bytes_feature(std::vector<std::string> values) {
  Feature f;
  f.kind = Feature::Kind::kBytes;
  f.bytes = std::move(values);
  return f;
}

Feature float_feature(std::vector<float> values) {
  Feature f;
  f.kind = Feature::Kind::kFloat;
  f.floats = std::move(values);
  return f;
}

Feature int64_feature(std::vector<int64_t> values) {
  Feature f;
  f.kind = Feature::Kind::kInt64;
  f.ints = std::move(values);
  return f;
}

}  // namespace kiln::io
