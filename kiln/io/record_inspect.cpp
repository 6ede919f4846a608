#include "kiln/io/record_inspect.h"

#include <limits>
#include <map>

#include "kiln/core/text_codec.h"
#include "kiln/io/example.h"
#include "kiln/io/protobuf_wire.h"
#include "kiln/io/tfrecord.h"

namespace kiln::io {
namespace {

// Type and length range of one feature (or feature list) over the records read so far.
struct FeatureStats {
  Feature::Kind kind = Feature::Kind::kNone;
  bool mixed = false;
  size_t min_len = std::numeric_limits<size_t>::max(), max_len = 0;
  int64_t records_with = 0;

  void add(Feature::Kind seen, size_t length) {
    if (seen != Feature::Kind::kNone && kind != Feature::Kind::kNone && seen != kind) mixed = true;
    if (kind == Feature::Kind::kNone) kind = seen;
    min_len = std::min(min_len, length);
    max_len = std::max(max_len, length);
    records_with += 1;
  }
  Json to_json(int64_t records) const {
    // A record without the feature counts as an empty list, as TensorFlow reads it.
    size_t low = records_with < records ? 0 : min_len;
    Json out = {{"type", feature_kind_name(kind)},
                {"min_len", records_with ? low : 0},
                {"max_len", max_len},
                {"records_with", records_with}};
    if (mixed) out["mixed_types"] = true;
    return out;
  }
};

using Schema = std::map<std::string, FeatureStats>;

Json bytes_json(const std::string& value) {
  if (is_valid_utf8(value)) return value;
  return Json{{"b64", base64_encode(value)}};
}

Json values_json(const Feature& feature) {
  Json values = Json::array();
  for (const auto& b : feature.bytes) values.push_back(bytes_json(b));
  for (float f : feature.floats) values.push_back(f);
  for (int64_t i : feature.ints) values.push_back(i);
  return values;
}

Json features_json(const Features& features) {
  Json out = Json::object();
  for (const auto& [name, feature] : features) out[name] = values_json(feature);
  return out;
}

Json feature_lists_json(const std::map<std::string, std::vector<Feature>>& lists) {
  Json out = Json::object();
  for (const auto& [name, steps] : lists) {
    Json values = Json::array();
    for (const auto& step : steps) values.push_back(values_json(step));
    out[name] = values;
  }
  return out;
}

void add_features(Schema& schema, const Features& features) {
  for (const auto& [name, feature] : features) schema[name].add(feature.kind, feature.size());
}

Json schema_json(const Schema& schema, int64_t records) {
  Json out = Json::object();
  for (const auto& [name, stats] : schema) out[name] = stats.to_json(records);
  return out;
}

}  // namespace

bool looks_like_sequence_example(const std::string& record) {
  try {
    WireReader reader(record);
    while (!reader.done()) {
      WireType type;
      if (reader.read_key(type) == 2 && type == WireType::kLengthDelimited) return true;
      reader.skip(type);
    }
  } catch (const WireError&) {
    // Malformed either way; the Example parser reports it with its offset.
  }
  return false;
}

Json inspect_tfrecord(const std::string& path, std::optional<Compression> compression) {
  TfRecordReader reader(path, compression);
  Schema features, feature_lists;
  Json first = Json::object(), first_lists = Json::object();
  std::optional<bool> sequence;
  std::string record;
  while (reader.next(record)) {
    RecordLocation where{path, reader.record_index() - 1, reader.record_offset() + 12};
    if (!sequence) sequence = looks_like_sequence_example(record);
    if (*sequence) {
      SequenceExample example = parse_sequence_example(record, where);
      add_features(features, example.context);
      for (const auto& [name, steps] : example.feature_lists) {
        Feature::Kind kind = steps.empty() ? Feature::Kind::kNone : steps.front().kind;
        feature_lists[name].add(kind, steps.size());
      }
      if (where.record == 0) {
        first = features_json(example.context);
        first_lists = feature_lists_json(example.feature_lists);
      }
    } else {
      Example example = parse_example(record, where);
      add_features(features, example.features);
      if (where.record == 0) first = features_json(example.features);
    }
  }
  int64_t records = reader.record_index();
  Json out = {{"records", records},
              {"compression", compression_name(reader.compression())},
              {"kind", sequence.value_or(false) ? "sequence_example" : "example"},
              {"features", schema_json(features, records)}};
  if (sequence.value_or(false)) out["feature_lists"] = schema_json(feature_lists, records);
  out["first"] = first;
  if (sequence.value_or(false)) out["first_feature_lists"] = first_lists;
  return out;
}

}  // namespace kiln::io
