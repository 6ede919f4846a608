#include "kiln/io/safetensors.h"

#include <algorithm>
#include <cstring>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"
#include "kiln/io/file_bytes.h"

namespace kiln::io {
namespace {

constexpr uint64_t kMaxHeaderSize = 100'000'000;
// A tensor takes a few values (dtype, shape, offsets): a million is 100,000 tensors and more,
// where 99 MB of empty objects under the header's length limit took 3.1 GB.
constexpr size_t kMaxHeaderValues = size_t{1} << 20;

struct Fail {
  const std::string& name;
  [[noreturn]] void operator()(int64_t offset, const std::string& problem) const {
    throw DataError(name, -1, offset, "invalid safetensors file: " + problem);
  }
};

uint64_t read_le64(const std::string& bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

bool valid_utf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<uint8_t>(text[i]);
    size_t extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
    if (extra == 9 || i + extra >= text.size()) return false;
    for (size_t k = 1; k <= extra; ++k)
      if ((static_cast<uint8_t>(text[i + k]) >> 6) != 2) return false;
    i += extra + 1;
  }
  return true;
}

// Reads one tensor entry; returns the element count times bits, checked for overflow.
SafeTensor parse_entry(const std::string& key, const Json& info, const Fail& fail, uint64_t& begin,
                       uint64_t& end) {
  if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
      !info.contains("data_offsets") || !info["dtype"].is_string() || !info["shape"].is_array() ||
      !info["data_offsets"].is_array() || info["data_offsets"].size() != 2)
    fail(8, "tensor \"" + key + "\" needs dtype, shape and data_offsets [begin, end]");
  SafeTensor tensor;
  tensor.name = key;
  tensor.dtype = info["dtype"].get<std::string>();
  int bits = dtype_bits(tensor.dtype);
  if (bits == 0) fail(8, "tensor \"" + key + "\" has unknown dtype \"" + tensor.dtype + "\"");
  unsigned __int128 total_bits = static_cast<unsigned>(bits);
  for (const auto& dim : info["shape"]) {
    if (!dim.is_number_unsigned()) fail(8, "tensor \"" + key + "\" has a non-integer dimension");
    tensor.shape.push_back(dim.get<int64_t>());
    total_bits *= dim.get<uint64_t>();
    if (total_bits > (static_cast<unsigned __int128>(1) << 64))
      fail(8, "tensor \"" + key + "\": the shape's size overflows");
  }
  for (const auto& offset : info["data_offsets"])
    if (!offset.is_number_unsigned()) fail(8, "tensor \"" + key + "\" has a bad data offset");
  begin = info["data_offsets"][0].get<uint64_t>();
  end = info["data_offsets"][1].get<uint64_t>();
  if (end < begin) fail(8, "tensor \"" + key + "\" ends before it begins");
  if (total_bits % 8 != 0) fail(8, "tensor \"" + key + "\" does not fill whole bytes");
  if (end - begin != static_cast<uint64_t>(total_bits / 8))
    fail(8, "tensor \"" + key + "\" has " + std::to_string(end - begin) +
                " bytes, its dtype and "
                "shape need " +
                std::to_string(static_cast<uint64_t>(total_bits / 8)));
  return tensor;
}

}  // namespace

const SafeTensor* SafeTensorsFile::find(const std::string& name) const {
  for (const auto& tensor : tensors)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

namespace {

// The reference `Dtype` enum, in declaration order, with bits per element. Its writer orders
// tensors by this position, descending (roughly widest first), then by name.
struct DtypeInfo {
  const char* name;
  int bits;
};
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64}};

int dtype_position(const std::string& dtype) {
  for (size_t i = 0; i < std::size(kDtypes); ++i)
    if (dtype == kDtypes[i].name) return static_cast<int>(i);
  return -1;
}

}  // namespace

int dtype_bits(const std::string& dtype) {
  int position = dtype_position(dtype);
  return position < 0 ? 0 : kDtypes[position].bits;
}

SafeTensorsFile parse_safetensors(std::string bytes, const std::string& name) {
  Fail fail{name};
  if (bytes.size() < 8) fail(0, "the file is shorter than the 8-byte header length");
  uint64_t n = read_le64(bytes);
  if (n > kMaxHeaderSize) fail(0, "header length " + std::to_string(n) + " exceeds 100000000");
  if (n > bytes.size() - 8)
    fail(0, "header length " + std::to_string(n) + " runs past the end of the file");
  std::string header = bytes.substr(8, n);
  if (!valid_utf8(header)) fail(8, "the header is not valid UTF-8");
  Json json;
  try {
    json = parse_json_text(header, kMaxJsonDepth, kMaxHeaderValues);
  } catch (const JsonTextError& e) {
    fail(8 + std::max<int64_t>(e.byte(), 0), std::string("the header is not JSON: ") + e.what());
  }
  if (!json.is_object()) fail(8, "the header is not a JSON object");

  SafeTensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [key, info] : json.items()) {
    if (key == "__metadata__") {
      if (!info.is_object()) fail(8, "__metadata__ must map strings to strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) fail(8, "__metadata__ must map strings to strings");
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    uint64_t begin = 0, end = 0;
    file.tensors.push_back(parse_entry(key, info, fail, begin, end));
    ranges.emplace_back(begin, end);
  }
  // The buffer must be covered exactly, without holes or overlaps.
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  uint64_t data_start = 8 + n, expected_begin = 0;
  for (size_t i : order) {
    if (ranges[i].first != expected_begin)
      fail(static_cast<int64_t>(data_start + ranges[i].first),
           "tensor \"" + file.tensors[i].name + "\" does not start where the previous one ends");
    expected_begin = ranges[i].second;
  }
  if (data_start + expected_begin != bytes.size())
    fail(static_cast<int64_t>(data_start + expected_begin),
         "the tensors cover " + std::to_string(expected_begin) + " bytes of a " +
             std::to_string(bytes.size() - data_start) + "-byte buffer");

  file.bytes = std::move(bytes);
  std::vector<SafeTensor> sorted;
  for (size_t i : order) {
    SafeTensor tensor = file.tensors[i];
    tensor.data =
        reinterpret_cast<const uint8_t*>(file.bytes.data()) + data_start + ranges[i].first;
    tensor.size = ranges[i].second - ranges[i].first;
    sorted.push_back(std::move(tensor));
  }
  file.tensors = std::move(sorted);
  return file;
}

SafeTensorsFile read_safetensors(const std::string& path) {
  return parse_safetensors(read_file_bytes(path), path);
}

std::string serialize_safetensors(std::vector<SafeTensorView> tensors,
                                  const std::map<std::string, std::string>& metadata) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    int rank_a = dtype_position(a.dtype), rank_b = dtype_position(b.dtype);
    return rank_a != rank_b ? rank_a > rank_b : a.name < b.name;
  });
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& tensor : tensors) {
    KILN_ASSERT(dtype_bits(tensor.dtype) != 0);
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.size}}};
    offset += tensor.size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  out += text;
  for (const auto& tensor : tensors) out.append(static_cast<const char*>(tensor.data), tensor.size);
  return out;
}

}  // namespace kiln::io
