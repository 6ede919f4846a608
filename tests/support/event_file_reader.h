#pragma once
// An independent decoder of TensorBoard event files (TFRecord framing of serialized Event protos,
// docs/formats.md §1.1 and §3), for tests that check what kiln writes.
//
// Motivation: a test that reads kiln's files back with kiln's own reader, protobuf classes or
// CRC would agree with any mistake those share. This is a second implementation written from the
// spec with the standard library only: a generic protobuf wire-format parser, its own CRC32C, and
// typed views of the Event / Summary / HParams messages TensorBoard reads. It decodes only what
// the tests look at; unknown fields are skipped as protobuf readers do.
//
// Errors (malformed wire data, bad CRC, truncation, unreadable file) throw std::runtime_error.
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::testing {

// ---- Protobuf wire format -------------------------------------------------------------------

/// One field of a message as it appears on the wire. Fixed64 and fixed32 fields keep their raw
/// bits in `varint`; length-delimited fields keep their payload in `bytes`.
struct WireField {
  int number = 0;
  int wire_type = 0;
  uint64_t varint = 0;
  std::string bytes;
};

/// Splits `message` into its fields in wire order; throws on a truncated varint, a length past
/// the end, a field number 0 or the group / reserved wire types 3, 4, 6, 7.
std::vector<WireField> parse_wire(std::string_view message);

/// The value of a fixed64 (wire type 1) field as a double; throws on another wire type.
double as_double(const WireField& field);
/// The value of a fixed32 (wire type 5) field as a float; throws on another wire type.
float as_float(const WireField& field);
/// Payloads of packed repeated fields; throw when the size is not a multiple of the element size
/// or a varint is truncated.
std::vector<double> packed_doubles(std::string_view payload);
std::vector<float> packed_floats(std::string_view payload);
std::vector<uint64_t> packed_varints(std::string_view payload);

// ---- TFRecord framing -----------------------------------------------------------------------

/// The masked CRC32C TFRecord stores: ((crc >> 15) | (crc << 17)) + 0xa282ead8, where crc is
/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `bytes`.
uint32_t tfrecord_masked_crc(std::string_view bytes);

/// Every record of the TFRecord file at `path`, both CRCs verified; throws naming the file and
/// the record index on a bad CRC or a truncated record.
std::vector<std::string> read_tfrecords(const std::string& path);

// ---- Event / Summary ------------------------------------------------------------------------

struct DecodedImage {
  int height = 0, width = 0, colorspace = 0;
  std::string encoded;
};

struct DecodedHistogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> limits, buckets;
};

struct DecodedTensor {
  int dtype = 0;  // tensorflow DataType: DT_FLOAT 1, DT_DOUBLE 2, DT_STRING 7, ...
  std::vector<int64_t> shape;
  bool has_shape = false;
  std::string content;  // tensor_content: raw little-endian element bytes
  std::vector<std::string> strings;
  std::vector<float> floats;
  std::vector<double> doubles;
};

struct DecodedValue {
  std::string tag, plugin, plugin_content;
  std::optional<float> simple_value;
  std::optional<DecodedImage> image;
  std::optional<DecodedHistogram> histogram;
  std::optional<DecodedTensor> tensor;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version, source_writer;
  int session_status = -1;  // -1: the event has no session_log
  std::string graph_def;    // a serialized GraphDef, when the event holds one
  std::vector<DecodedValue> values;
};

/// Decodes one serialized Event (one record of an event file).
DecodedEvent decode_event(std::string_view record);
/// Every event of the event file at `path`, in file order.
std::vector<DecodedEvent> read_event_file(const std::string& path);

/// A scalar value as TensorBoard reads it: simple_value, or a rank-0 DT_FLOAT (1) / DT_DOUBLE (2)
/// tensor from tensor_content or float_val / double_val; throws when the value is not a scalar.
double scalar_of(const DecodedValue& value);

/// The elements of a DT_FLOAT tensor, from tensor_content or float_val; throws on another dtype
/// or a content whose size is no multiple of 4.
std::vector<float> tensor_floats(const DecodedTensor& tensor);

/// Every event file (basename contains "tfevents") in a directory, sorted by name as TensorBoard
/// reads them; full paths. Throws when the directory cannot be listed.
std::vector<std::string> event_files_in(const std::string& directory);

// ---- HParams plugin -------------------------------------------------------------------------

struct DecodedHParams {
  std::string kind;  // "experiment", "session_start_info" or "session_end_info"
  /// session_start_info: name -> value printed (numbers via std::ostringstream, strings as is,
  /// bools "true"/"false", null "null").
  std::map<std::string, std::string> hparams;
  std::vector<std::string> hparam_names;                     // experiment: hparam_infos names
  std::vector<std::pair<std::string, std::string>> metrics;  // experiment: (group, tag)
  int status = -1;                                           // session_end_info: Status enum
  double time_secs = 0;  // time_created_secs / start_time_secs / end_time_secs
};

/// Decodes SummaryMetadata.PluginData.content of an "hparams" value (a serialized
/// HParamsPluginData); throws when it holds none of the three kinds.
DecodedHParams decode_hparams(std::string_view plugin_content);

// ---- GraphDef (the Graphs tab) and the pr_curves plugin -----------------------------------------

struct DecodedAttr {
  int type = -1;                                  // a DataType, when the attr holds one
  std::optional<std::vector<int64_t>> shape;      // a TensorShapeProto
  std::vector<std::vector<int64_t>> list_shapes;  // list.shape
};

struct DecodedNode {
  std::string name, op, device;
  std::vector<std::string> inputs;
  std::map<std::string, DecodedAttr> attrs;
};

struct DecodedGraph {
  std::vector<DecodedNode> nodes;
  int producer = 0;  // versions.producer
};

/// Decodes a serialized GraphDef (Event.graph_def).
DecodedGraph decode_graph_def(std::string_view message);

/// PrCurvePluginData {version = 1, num_thresholds = 2} from a "pr_curves" value's content.
struct DecodedPrCurvePlugin {
  int version = 0;
  int64_t num_thresholds = 0;
};
DecodedPrCurvePlugin decode_pr_curve_plugin(std::string_view plugin_content);

}  // namespace kiln::testing
