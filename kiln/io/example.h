#pragma once
// tf.train.Example and tf.train.SequenceExample (docs/formats.md §1.2), decoded from and encoded to
// the protobuf wire format. Decoding accepts what TensorFlow and other writers produce: packed and
// unpacked numeric lists, features with no value set, map entries in any order, unknown fields.
// Encoding writes what TensorFlow writes: packed lists, one entry per feature.
// Thread-safety: values.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io {

/// One feature: a list of bytes, floats or int64s, or no value at all (`kNone`, which TensorFlow
/// uses for a missing cell and reads as an empty list).
struct Feature {
  enum class Kind { kNone = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };  // = the proto field numbers
  Kind kind = Kind::kNone;
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  /// Number of values of whatever kind it holds.
  size_t size() const;
  bool operator==(const Feature& other) const;
};

/// `bytes_list`, `float_list`, `int64_list` or `none`: the names TensorFlow's proto uses.
const char* feature_kind_name(Feature::Kind kind);

/// Features by name; sorted, whatever order the record had.
using Features = std::map<std::string, Feature>;

struct Example {
  Features features;
};

struct SequenceExample {
  Features context;
  std::map<std::string, std::vector<Feature>> feature_lists;
};

/// Where a record came from, for error messages.
struct RecordLocation {
  std::string file;
  int64_t record = -1;
  int64_t offset = -1;  // byte offset of the record's first payload byte
};

/// Decodes a serialized Example; throws DataError naming `where` and the byte offset.
Example parse_example(std::string_view bytes, const RecordLocation& where = {});
/// Empties `feature` (kNone, no values), keeping its lists' memory for the next values.
void clear_values(Feature& feature);
/// Decodes a serialized Example into `example`, reusing its memory from the record before: the
/// features this record lacks stay in the map without values (kNone, empty), as a missing value
/// reads. For passes over many records (feature columns).
void parse_example_into(std::string_view bytes, Example& example, const RecordLocation& where = {});
/// Decodes a serialized SequenceExample; throws DataError naming `where` and the byte offset.
SequenceExample parse_sequence_example(std::string_view bytes, const RecordLocation& where = {});

std::string encode_example(const Example& example);
std::string encode_sequence_example(const SequenceExample& example);

/// Feature helpers for writers and tests.
Feature bytes_feature(std::vector<std::string> values);
Feature float_feature(std::vector<float> values);
Feature int64_feature(std::vector<int64_t> values);

}  // namespace kiln::io
