#include "tests/support/event_file_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <type_traits>

// Field numbers below are those of docs/formats.md §3.2, §3.3 and §3.5.

namespace kiln::testing {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

// ---- Wire primitives ------------------------------------------------------------------------

uint64_t read_varint(std::string_view data, size_t& pos) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size()) fail("protobuf: truncated varint at byte " + std::to_string(pos));
    const auto byte = static_cast<uint8_t>(data[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
  fail("protobuf: varint longer than 10 bytes before byte " + std::to_string(pos));
}

// Byte by byte, so the result does not depend on the host's byte order.
uint64_t load_le(std::string_view data, size_t pos, size_t size) {
  uint64_t value = 0;
  for (size_t i = size; i-- > 0;) value = (value << 8) | static_cast<uint8_t>(data[pos + i]);
  return value;
}

std::string_view take(std::string_view data, size_t& pos, uint64_t size) {
  if (size > data.size() - pos) {
    fail("protobuf: " + std::to_string(size) + " bytes needed at byte " + std::to_string(pos) +
         ", " + std::to_string(data.size() - pos) + " left");
  }
  std::string_view taken = data.substr(pos, size);
  pos += size;
  return taken;
}

// The IEEE value whose bits are the low sizeof(T) bytes of `bits`.
template <typename T>
T from_bits(uint64_t bits) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  const auto narrow = static_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(bits);
  T value;
  std::memcpy(&value, &narrow, sizeof(value));
  return value;
}

WireField read_field(std::string_view data, size_t& pos) {
  const uint64_t key = read_varint(data, pos);
  if (key >> 3 == 0 || key >> 3 > 0x1fffffff) {
    fail("protobuf: invalid field number before byte " + std::to_string(pos));
  }
  WireField field;
  field.number = static_cast<int>(key >> 3);
  field.wire_type = static_cast<int>(key & 7);
  const int type = field.wire_type;
  if (type == 0) field.varint = read_varint(data, pos);
  if (type == 1) field.varint = load_le(take(data, pos, 8), 0, 8);
  if (type == 2) field.bytes = std::string(take(data, pos, read_varint(data, pos)));
  if (type == 5) field.varint = load_le(take(data, pos, 4), 0, 4);
  if (type == 3 || type == 4 || type > 5) {  // groups (deprecated) and reserved types
    fail("protobuf: field " + std::to_string(field.number) + " has unsupported wire type " +
         std::to_string(type));
  }
  return field;
}

void expect_wire_type(const WireField& field, int wire_type) {
  if (field.wire_type != wire_type) {
    fail("protobuf: field " + std::to_string(field.number) + " has wire type " +
         std::to_string(field.wire_type) + ", expected " + std::to_string(wire_type));
  }
}

const std::string& bytes_of(const WireField& field) {
  expect_wire_type(field, 2);
  return field.bytes;
}

uint64_t varint_of(const WireField& field) {
  expect_wire_type(field, 0);
  return field.varint;
}

// int32 and enum fields: negative values are sign-extended to 64 bits on the wire.
int int_of(const WireField& field) {
  return static_cast<int>(static_cast<int64_t>(varint_of(field)));
}

// Repeated scalars arrive packed (one length-delimited field) or one field per element; protobuf
// parsers accept both whatever the declaration says.
void append_doubles(const WireField& field, std::vector<double>& out) {
  if (field.wire_type != 2) return out.push_back(as_double(field));
  for (double value : packed_doubles(field.bytes)) out.push_back(value);
}

void append_floats(const WireField& field, std::vector<float>& out) {
  if (field.wire_type != 2) return out.push_back(as_float(field));
  for (float value : packed_floats(field.bytes)) out.push_back(value);
}

void expect_multiple(std::string_view payload, size_t element_size) {
  if (payload.size() % element_size != 0) {
    fail("protobuf: packed payload of " + std::to_string(payload.size()) +
         " bytes is not a multiple of " + std::to_string(element_size));
  }
}

}  // namespace

std::vector<WireField> parse_wire(std::string_view message) {
  std::vector<WireField> fields;
  size_t pos = 0;
  while (pos < message.size()) fields.push_back(read_field(message, pos));
  return fields;
}

double as_double(const WireField& field) {
  expect_wire_type(field, 1);
  return from_bits<double>(field.varint);
}

float as_float(const WireField& field) {
  expect_wire_type(field, 5);
  return from_bits<float>(field.varint);
}

std::vector<double> packed_doubles(std::string_view payload) {
  expect_multiple(payload, 8);
  std::vector<double> values;
  for (size_t pos = 0; pos < payload.size(); pos += 8) {
    values.push_back(from_bits<double>(load_le(payload, pos, 8)));
  }
  return values;
}

std::vector<float> packed_floats(std::string_view payload) {
  expect_multiple(payload, 4);
  std::vector<float> values;
  for (size_t pos = 0; pos < payload.size(); pos += 4) {
    values.push_back(from_bits<float>(load_le(payload, pos, 4)));
  }
  return values;
}

std::vector<uint64_t> packed_varints(std::string_view payload) {
  std::vector<uint64_t> values;
  size_t pos = 0;
  while (pos < payload.size()) values.push_back(read_varint(payload, pos));
  return values;
}

// ---- TFRecord framing -----------------------------------------------------------------------

namespace {

std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0u);
    table[i] = crc;
  }
  return table;
}

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  uint32_t crc = 0xffffffffu;
  for (char c : bytes) crc = table[(crc ^ static_cast<uint8_t>(c)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The data of the record that starts at `pos`, which is advanced past it.
std::string next_record(std::string_view file, size_t& pos, size_t index, const std::string& path) {
  const auto error = [&](const std::string& what) {
    return path + ": record " + std::to_string(index) + " at byte " + std::to_string(pos) + ": " +
           what;
  };
  const size_t left = file.size() - pos;
  if (left < 12) fail(error("truncated header (" + std::to_string(left) + " bytes left)"));
  const uint64_t length = load_le(file, pos, 8);
  if (load_le(file, pos + 8, 4) != tfrecord_masked_crc(file.substr(pos, 8))) {
    fail(error("length CRC mismatch"));
  }
  if (length > left - 12 || left - 12 - length < 4) {
    fail(error("truncated: " + std::to_string(length) + " data bytes + 4 CRC bytes announced, " +
               std::to_string(left - 12) + " left"));
  }
  const std::string_view data = file.substr(pos + 12, length);
  if (load_le(file, pos + 12 + length, 4) != tfrecord_masked_crc(data)) {
    fail(error("data CRC mismatch"));
  }
  pos += 12 + length + 4;
  return std::string(data);
}

}  // namespace

uint32_t tfrecord_masked_crc(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::vector<std::string> read_tfrecords(const std::string& path) {
  const std::string file = read_whole_file(path);
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < file.size()) records.push_back(next_record(file, pos, records.size(), path));
  return records;
}

// ---- Event / Summary ------------------------------------------------------------------------

namespace {

int64_t dim_size(std::string_view dim) {
  int64_t size = 0;
  for (const WireField& field : parse_wire(dim)) {
    if (field.number == 1) size = static_cast<int64_t>(varint_of(field));
  }
  return size;
}

std::vector<int64_t> decode_shape(std::string_view message) {
  std::vector<int64_t> shape;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 2) shape.push_back(dim_size(bytes_of(field)));
  }
  return shape;
}

DecodedTensor decode_tensor(std::string_view message) {
  DecodedTensor tensor;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) tensor.dtype = int_of(field);
    if (field.number == 2) tensor.shape = decode_shape(bytes_of(field));
    if (field.number == 2) tensor.has_shape = true;
    if (field.number == 4) tensor.content = bytes_of(field);
    if (field.number == 5) append_floats(field, tensor.floats);
    if (field.number == 6) append_doubles(field, tensor.doubles);
    if (field.number == 8) tensor.strings.push_back(bytes_of(field));
  }
  return tensor;
}

DecodedImage decode_image(std::string_view message) {
  DecodedImage image;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) image.height = int_of(field);
    if (field.number == 2) image.width = int_of(field);
    if (field.number == 3) image.colorspace = int_of(field);
    if (field.number == 4) image.encoded = bytes_of(field);
  }
  return image;
}

DecodedHistogram decode_histogram(std::string_view message) {
  DecodedHistogram histogram;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) histogram.min = as_double(field);
    if (field.number == 2) histogram.max = as_double(field);
    if (field.number == 3) histogram.num = as_double(field);
    if (field.number == 4) histogram.sum = as_double(field);
    if (field.number == 5) histogram.sum_squares = as_double(field);
    if (field.number == 6) append_doubles(field, histogram.limits);
    if (field.number == 7) append_doubles(field, histogram.buckets);
  }
  return histogram;
}

// SummaryMetadata: only plugin_data {plugin_name, content} matters to the tests.
void decode_metadata(std::string_view message, DecodedValue& value) {
  for (const WireField& field : parse_wire(message)) {
    if (field.number != 1) continue;
    for (const WireField& plugin : parse_wire(bytes_of(field))) {
      if (plugin.number == 1) value.plugin = bytes_of(plugin);
      if (plugin.number == 2) value.plugin_content = bytes_of(plugin);
    }
  }
}

DecodedValue decode_value(std::string_view message) {
  DecodedValue value;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) value.tag = bytes_of(field);
    if (field.number == 2) value.simple_value = as_float(field);
    if (field.number == 4) value.image = decode_image(bytes_of(field));
    if (field.number == 5) value.histogram = decode_histogram(bytes_of(field));
    if (field.number == 8) value.tensor = decode_tensor(bytes_of(field));
    if (field.number == 9) decode_metadata(bytes_of(field), value);
  }
  return value;
}

// The last field numbered `number` (the one protobuf keeps for a singular field), or null when
// absent (proto3 leaves defaults out).
const WireField* last_field(const std::vector<WireField>& fields, int number) {
  for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
    if (it->number == number) return &*it;
  }
  return nullptr;
}

void decode_event_field(const WireField& field, DecodedEvent& event) {
  if (field.number == 1) event.wall_time = as_double(field);
  if (field.number == 2) event.step = static_cast<int64_t>(varint_of(field));
  if (field.number == 3) event.file_version = bytes_of(field);
  if (field.number == 4) event.graph_def = bytes_of(field);
  if (field.number == 5) {
    for (const WireField& value : parse_wire(bytes_of(field))) {
      if (value.number == 1) event.values.push_back(decode_value(bytes_of(value)));
    }
  }
  if (field.number == 7) {
    const std::vector<WireField> log = parse_wire(bytes_of(field));
    const WireField* status = last_field(log, 1);
    event.session_status = status ? int_of(*status) : 0;  // absent: STATUS_UNSPECIFIED
  }
  if (field.number == 10) {
    const std::vector<WireField> metadata = parse_wire(bytes_of(field));
    const WireField* writer = last_field(metadata, 1);
    if (writer) event.source_writer = bytes_of(*writer);
  }
}

// The single element of a rank-0 tensor of `width`-byte floats (4: DT_FLOAT, 8: DT_DOUBLE).
double tensor_scalar(const DecodedTensor& tensor, size_t width, const std::string& tag) {
  if (!tensor.content.empty()) {
    if (tensor.content.size() != width) {
      fail("value '" + tag + "': tensor_content of " + std::to_string(tensor.content.size()) +
           " bytes for a scalar of " + std::to_string(width));
    }
    const uint64_t bits = load_le(tensor.content, 0, width);
    return width == 4 ? from_bits<float>(bits) : from_bits<double>(bits);
  }
  const size_t count = width == 4 ? tensor.floats.size() : tensor.doubles.size();
  if (count != 1) {
    fail("value '" + tag + "': scalar tensor holds " + std::to_string(count) + " elements");
  }
  return width == 4 ? tensor.floats[0] : tensor.doubles[0];
}

}  // namespace

DecodedEvent decode_event(std::string_view record) {
  DecodedEvent event;
  for (const WireField& field : parse_wire(record)) decode_event_field(field, event);
  return event;
}

std::vector<DecodedEvent> read_event_file(const std::string& path) {
  std::vector<DecodedEvent> events;
  for (const std::string& record : read_tfrecords(path)) {
    try {
      events.push_back(decode_event(record));
    } catch (const std::runtime_error& e) {
      fail(path + ": record " + std::to_string(events.size()) + ": " + e.what());
    }
  }
  return events;
}

double scalar_of(const DecodedValue& value) {
  if (value.simple_value) return *value.simple_value;
  if (!value.tensor) fail("value '" + value.tag + "' has neither simple_value nor tensor");
  const DecodedTensor& tensor = *value.tensor;
  if (!tensor.shape.empty()) {
    fail("value '" + value.tag + "': tensor of rank " + std::to_string(tensor.shape.size()) +
         " is not a scalar");
  }
  if (tensor.dtype == 1) return tensor_scalar(tensor, 4, value.tag);
  if (tensor.dtype == 2) return tensor_scalar(tensor, 8, value.tag);
  fail("value '" + value.tag + "': tensor dtype " + std::to_string(tensor.dtype) +
       " is neither DT_FLOAT nor DT_DOUBLE");
}

std::vector<float> tensor_floats(const DecodedTensor& tensor) {
  if (tensor.dtype != 1) fail("tensor dtype " + std::to_string(tensor.dtype) + " is not DT_FLOAT");
  if (tensor.content.empty()) return tensor.floats;
  if (tensor.content.size() % 4 != 0)
    fail("tensor_content of " + std::to_string(tensor.content.size()) + " bytes: not floats");
  std::vector<float> values;
  for (size_t at = 0; at < tensor.content.size(); at += 4)
    values.push_back(from_bits<float>(load_le(tensor.content, at, 4)));
  return values;
}

std::vector<std::string> event_files_in(const std::string& directory) {
  std::error_code error;
  std::filesystem::directory_iterator entries(directory, error);
  if (error) fail(directory + ": cannot list: " + error.message());
  std::vector<std::string> files;
  for (const auto& entry : entries) {
    const bool is_events = entry.path().filename().string().find("tfevents") != std::string::npos;
    if (is_events && entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());  // same directory prefix: sorts by basename
  return files;
}

// ---- HParams plugin -------------------------------------------------------------------------

namespace {

std::string print_number(double number) {
  std::ostringstream out;
  out << number;  // %g-like: 0.1, 4, 1e-05
  return out.str();
}

// google.protobuf.Value is a oneof: the last kind on the wire wins.
std::string print_value(std::string_view message, const std::string& name) {
  std::optional<std::string> printed;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) printed = "null";
    if (field.number == 2) printed = print_number(as_double(field));
    if (field.number == 3) printed = bytes_of(field);
    if (field.number == 4) printed = varint_of(field) ? "true" : "false";
  }
  if (!printed) fail("hparam '" + name + "': Value holds no null, number, string or bool");
  return *printed;
}

// A map<string, Value> entry is a message {key = 1, value = 2}.
void decode_hparam_entry(std::string_view entry, std::map<std::string, std::string>& hparams) {
  std::string key, value;
  for (const WireField& field : parse_wire(entry)) {
    if (field.number == 1) key = bytes_of(field);
    if (field.number == 2) value = bytes_of(field);
  }
  hparams[key] = print_value(value, key);
}

void decode_session_start(std::string_view message, DecodedHParams& out) {
  out.kind = "session_start_info";
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) decode_hparam_entry(bytes_of(field), out.hparams);
    if (field.number == 5) out.time_secs = as_double(field);
  }
}

void decode_session_end(std::string_view message, DecodedHParams& out) {
  out.kind = "session_end_info";
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) out.status = int_of(field);
    if (field.number == 2) out.time_secs = as_double(field);
  }
}

std::string hparam_info_name(std::string_view message) {
  const auto fields = parse_wire(message);
  const WireField* name = last_field(fields, 1);
  return name ? bytes_of(*name) : std::string();
}

// MetricInfo {name = 1: MetricName {group = 1, tag = 2}}.
std::pair<std::string, std::string> metric_name(std::string_view metric_info) {
  std::pair<std::string, std::string> group_tag;
  for (const WireField& info : parse_wire(metric_info)) {
    if (info.number != 1) continue;
    for (const WireField& field : parse_wire(bytes_of(info))) {
      if (field.number == 1) group_tag.first = bytes_of(field);
      if (field.number == 2) group_tag.second = bytes_of(field);
    }
  }
  return group_tag;
}

void decode_experiment(std::string_view message, DecodedHParams& out) {
  out.kind = "experiment";
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 3) out.time_secs = as_double(field);
    if (field.number == 4) out.hparam_names.push_back(hparam_info_name(bytes_of(field)));
    if (field.number == 5) out.metrics.push_back(metric_name(bytes_of(field)));
  }
}

}  // namespace

DecodedHParams decode_hparams(std::string_view plugin_content) {
  DecodedHParams out;
  for (const WireField& field : parse_wire(plugin_content)) {
    if (field.number < 2 || field.number > 4) continue;  // version, unknown fields
    out = DecodedHParams{};  // `data` is a oneof: the last one on the wire wins
    if (field.number == 2) decode_experiment(bytes_of(field), out);
    if (field.number == 3) decode_session_start(bytes_of(field), out);
    if (field.number == 4) decode_session_end(bytes_of(field), out);
  }
  if (out.kind.empty()) fail("hparams plugin content holds no experiment or session info");
  return out;
}

// ---- GraphDef and pr_curves -------------------------------------------------------------------

namespace {

// AttrValue: list = 1 (ListValue: shape = 7), type = 6, shape = 7.
DecodedAttr decode_attr(std::string_view message) {
  DecodedAttr attr;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 6) attr.type = int_of(field);
    if (field.number == 7) attr.shape = decode_shape(bytes_of(field));
    if (field.number != 1) continue;
    for (const WireField& item : parse_wire(bytes_of(field)))
      if (item.number == 7) attr.list_shapes.push_back(decode_shape(bytes_of(item)));
  }
  return attr;
}

// NodeDef: name 1, op 2, input 3, device 4, attr 5 (map entries {key 1, value 2}).
DecodedNode decode_node(std::string_view message) {
  DecodedNode node;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) node.name = bytes_of(field);
    if (field.number == 2) node.op = bytes_of(field);
    if (field.number == 3) node.inputs.push_back(bytes_of(field));
    if (field.number == 4) node.device = bytes_of(field);
    if (field.number != 5) continue;
    std::string key, value;
    for (const WireField& entry : parse_wire(bytes_of(field))) {
      if (entry.number == 1) key = bytes_of(entry);
      if (entry.number == 2) value = bytes_of(entry);
    }
    node.attrs[key] = decode_attr(value);
  }
  return node;
}

}  // namespace

DecodedGraph decode_graph_def(std::string_view message) {
  DecodedGraph graph;
  for (const WireField& field : parse_wire(message)) {
    if (field.number == 1) graph.nodes.push_back(decode_node(bytes_of(field)));
    if (field.number != 4) continue;
    for (const WireField& version : parse_wire(bytes_of(field)))
      if (version.number == 1) graph.producer = int_of(version);
  }
  return graph;
}

DecodedPrCurvePlugin decode_pr_curve_plugin(std::string_view plugin_content) {
  DecodedPrCurvePlugin plugin;
  for (const WireField& field : parse_wire(plugin_content)) {
    if (field.number == 1) plugin.version = int_of(field);
    if (field.number == 2) plugin.num_thresholds = static_cast<int64_t>(varint_of(field));
  }
  return plugin;
}

}  // namespace kiln::testing
