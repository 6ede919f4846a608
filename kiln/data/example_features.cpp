#include "kiln/data/example_features.h"

#include <numeric>

#include <fmt/ranges.h>

#include "kiln/core/error.h"
#include "kiln/data/dtype_names.h"
#include "kiln/io/image_codec.h"

namespace kiln::data {
namespace {

int64_t element_count(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

torch::Dtype torch_dtype(FeatureDtype dtype) { return *dtype_named(enum_name(dtype)); }

[[noreturn]] void fail(const io::RecordLocation& where, const std::string& feature,
                       const std::string& problem) {
  throw DataError(where.file, where.record, where.offset,
                  fmt::format("feature \"{}\": {}", feature, problem));
}

std::string describe_location(const io::RecordLocation& where, const std::string& feature) {
  return fmt::format("{}, record {}, feature {}", where.file, where.record, feature);
}

// Writes `count` values of `source` into `target` (contiguous), moving [H, W, C] to [C, H, W]
// when `channels` is above 1 (`height_width` = H * W), and converting each as `convert` does.
template <class From, class To, class Convert>
void copy_values(const From* source, To* target, int64_t count, int64_t channels,
                 int64_t height_width, Convert convert) {
  if (channels <= 1) {
    for (int64_t i = 0; i < count; ++i) target[i] = convert(source[i]);
    return;
  }
  for (int64_t p = 0; p < height_width; ++p)
    for (int64_t c = 0; c < channels; ++c)
      target[c * height_width + p] = convert(source[p * channels + c]);
}

// The common case written straight into row `row` of `column`, with no tensor operations per
// record (which cost more than the decoding): raw values of the declared count, as bytes into
// uint8 or float32, floats into float32, integers into int64 or float32; the same numbers as
// FeatureDecoder::value() (a float32 scaled in float). False where that path must decide.
bool write_directly(const FeatureSpec& spec, const io::Feature& f, torch::Tensor& column,
                    int64_t row) {
  using Kind = io::Feature::Kind;
  int64_t count = element_count(spec.shape);
  if (count == 0 || spec.encoding != FeatureEncoding::kRaw || !column.is_contiguous() ||
      static_cast<int64_t>(f.size()) != (f.kind == Kind::kBytes ? 1 : count))
    return false;
  if (f.kind == Kind::kBytes && static_cast<int64_t>(f.bytes[0].size()) != count) return false;
  int64_t channels = spec.channels_first ? spec.shape[2] : 1;
  int64_t height_width = spec.channels_first ? spec.shape[0] * spec.shape[1] : count;
  float scale = static_cast<float>(spec.scale);
  auto scaled = [scale](auto v) { return static_cast<float>(v) * scale; };
  auto as_is = [](auto v) { return v; };
  const auto* bytes =
      f.kind == Kind::kBytes ? reinterpret_cast<const uint8_t*>(f.bytes[0].data()) : nullptr;
  if (spec.dtype == FeatureDtype::kFloat32) {
    float* target = column.data_ptr<float>() + row * count;
    if (bytes) copy_values(bytes, target, count, channels, height_width, scaled);
    if (f.kind == Kind::kFloat)
      copy_values(f.floats.data(), target, count, channels, height_width, scaled);
    if (f.kind == Kind::kInt64)
      copy_values(f.ints.data(), target, count, channels, height_width, scaled);
    return true;
  }
  if (spec.dtype == FeatureDtype::kUint8 && bytes) {
    copy_values(bytes, column.data_ptr<uint8_t>() + row * count, count, channels, height_width,
                as_is);
    return true;
  }
  if (spec.dtype == FeatureDtype::kInt64 && f.kind == Kind::kInt64) {
    copy_values(f.ints.data(), column.data_ptr<int64_t>() + row * count, count, channels,
                height_width, as_is);
    return true;
  }
  return false;
}

// The raw values of a feature as a 1-D tensor, before any shape or dtype is applied.
torch::Tensor raw_values(const std::string& name, const FeatureSpec& spec, const io::Feature& f,
                         const io::RecordLocation& where) {
  using Kind = io::Feature::Kind;
  if (spec.encoding != FeatureEncoding::kRaw && f.kind != Kind::kBytes)
    fail(where, name,
         fmt::format("is a {}, but encoding {} needs a bytes_list", io::feature_kind_name(f.kind),
                     enum_name(spec.encoding)));
  switch (f.kind) {
    case Kind::kFloat:
      return torch::from_blob(const_cast<float*>(f.floats.data()), {int64_t(f.floats.size())},
                              torch::kFloat32);
    case Kind::kInt64:
      return torch::from_blob(const_cast<int64_t*>(f.ints.data()), {int64_t(f.ints.size())},
                              torch::kInt64);
    case Kind::kBytes:
      break;
    case Kind::kNone:
      return torch::empty({0});
  }
  if (spec.encoding == FeatureEncoding::kRaw) {
    std::string joined;
    for (const auto& b : f.bytes) joined += b;
    return torch::from_blob(joined.data(), {int64_t(joined.size())}, torch::kUInt8).clone();
  }
  if (f.bytes.size() != 1)
    fail(where, name,
         fmt::format("holds {} images; an encoded image feature holds one", f.bytes.size()));
  int channels = spec.shape.size() == 3 ? static_cast<int>(spec.shape[2]) : 1;
  io::Image image = io::decode_image(f.bytes[0], channels, describe_location(where, name));
  if (spec.shape.size() >= 2 && (image.height != spec.shape[0] || image.width != spec.shape[1]))
    fail(where, name,
         fmt::format("is a {}x{} image, the spec's shape is [{}]", image.height, image.width,
                     fmt::join(spec.shape, ", ")));
  return torch::from_blob(image.pixels.data(), {int64_t(image.pixels.size())}, torch::kUInt8)
      .clone();
}

// What a feature holds, in the terms of its list: "3 floats", or for a bytes_list read raw "3
// bytes (a bytes_list, read one byte per value: encoding raw)", so that a bytes feature declared
// as numbers is recognisable as such.
std::string describe_count(const io::Feature& feature, const torch::Tensor& values) {
  using Kind = io::Feature::Kind;
  switch (feature.kind) {
    case Kind::kFloat:
      return fmt::format("{} floats (a float_list)", values.numel());
    case Kind::kInt64:
      return fmt::format("{} integers (an int64_list)", values.numel());
    case Kind::kBytes:
      if (values.scalar_type() == torch::kUInt8 && feature.bytes.size() <= 1)
        return fmt::format("{} bytes (a bytes_list, read one byte per value: encoding raw)",
                           values.numel());
      return fmt::format("{} values from a bytes_list of {} items", values.numel(),
                         feature.bytes.size());
    case Kind::kNone:
      break;
  }
  return fmt::format("{} values", values.numel());
}

}  // namespace

void FeatureSpec::describe(Schema& s) {
  s.field("dtype", dtype, "Type of the delivered tensor.");
  s.field("shape", shape, "Shape of one example's value as stored ([] for a single value).")
      .each_min(1);
  s.field("encoding", encoding, "How a bytes_list is read: raw bytes, or one PNG/JPEG image.");
  s.field("default", default_value,
          "Value for every element when the feature is missing or empty; null: such a record "
          "is an error.");
  s.field("scale", scale,
          "Multiplies float32 values (1/255 = 0.00392156862745098 maps bytes "
          "to [0, 1]).");
  s.field("channels_first", channels_first,
          "The stored shape is [H, W, C]; deliver [C, H, W], the layout conv2d reads.");
}

FeatureDecoder::FeatureDecoder(std::map<std::string, FeatureSpec> specs, const std::string& path)
    : specs_(std::move(specs)) {
  for (const auto& [name, spec] : specs_) {
    if (spec.channels_first && spec.shape.size() != 3)
      throw ConfigError(
          path + "." + name + ".channels_first", "",
          fmt::format("needs a shape [H, W, C], got [{}]", fmt::join(spec.shape, ", ")));
    if (!spec.default_value.is_null() && !spec.default_value.is_number())
      throw ConfigError(path + "." + name + ".default", "",
                        "expected a number or null, got " + spec.default_value.dump());
  }
}

std::vector<int64_t> FeatureDecoder::delivered_shape(const std::string& feature) const {
  const FeatureSpec& spec = specs_.at(feature);
  if (!spec.channels_first) return spec.shape;
  return {spec.shape[2], spec.shape[0], spec.shape[1]};
}

std::optional<io::ImageInput> FeatureDecoder::image_input(const std::string& feature) const {
  const FeatureSpec& spec = specs_.at(feature);
  // [H, W] images deliver no channel dimension, which ImageInput's layouts have.
  if (spec.encoding == FeatureEncoding::kRaw || spec.shape.size() != 3) return std::nullopt;
  io::ImageInput image;
  image.height = spec.shape[0];
  image.width = spec.shape[1];
  image.channels = spec.shape[2];
  image.channels_first = spec.channels_first;
  image.scale = spec.dtype == FeatureDtype::kFloat32 ? spec.scale : 1.0;  // as values_of does
  return image;
}

std::map<std::string, torch::Tensor> FeatureDecoder::allocate(int64_t rows) const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, spec] : specs_) {
    std::vector<int64_t> shape = delivered_shape(name);
    shape.insert(shape.begin(), rows);
    out[name] = torch::empty(shape, torch_dtype(spec.dtype));
  }
  return out;
}

torch::Tensor FeatureDecoder::values_of(const std::string& label, const FeatureSpec& spec,
                                        const io::Feature* feature,
                                        const io::RecordLocation& where) const {
  int64_t wanted = element_count(spec.shape);
  if (!feature || feature->size() == 0) {
    if (spec.default_value.is_null())
      fail(where, label, "is missing; declare a default for it, or use on_corrupt: skip");
    return torch::full({wanted}, spec.default_value.get<double>(), torch::kFloat64);
  }
  torch::Tensor values = raw_values(label, spec, *feature, where);
  if (values.numel() != wanted)
    fail(where, label,
         fmt::format("holds {}, its shape [{}] needs {} values", describe_count(*feature, values),
                     fmt::join(spec.shape, ", "), wanted));
  return values;
}

void FeatureDecoder::decode(const io::Example& example, const io::RecordLocation& where,
                            int64_t row, std::map<std::string, torch::Tensor>& out) const {
  for (const auto& [name, spec] : specs_) {
    auto found = example.features.find(name);
    const io::Feature* feature = found == example.features.end() ? nullptr : &found->second;
    torch::Tensor& column = out.at(name);
    if (feature && write_directly(spec, *feature, column, row)) continue;
    column[row].copy_(value(name, feature, where, name));
  }
}

torch::Tensor FeatureDecoder::value(const std::string& name, const io::Feature* feature,
                                    const io::RecordLocation& where,
                                    const std::string& label) const {
  const FeatureSpec& spec = specs_.at(name);
  torch::Tensor values = values_of(label, spec, feature, where).view(spec.shape);
  if (spec.channels_first) values = values.permute({2, 0, 1});
  torch::Tensor converted = values.to(torch_dtype(spec.dtype));
  if (spec.dtype == FeatureDtype::kFloat32 && spec.scale != 1.0) converted.mul_(spec.scale);
  return converted;
}

RecordDecoder::RecordDecoder(const RecordSpec& spec, const std::string& path)
    : sequence_(spec.kind == RecordKind::kSequenceExample),
      context_(spec.features, path + "features"),
      steps_(spec.sequence_features, path + "sequence_features"),
      length_(spec.steps),
      pad_(spec.pad) {
  if (sequence_ && !spec.sequence_features.empty() && spec.steps < 1)
    throw ConfigError(path + "steps", "",
                      "sequence_features need the number of steps to deliver (>= 1)");
  if (!sequence_ && !spec.sequence_features.empty())
    throw ConfigError(path + "sequence_features", "",
                      "only a sequence_example has feature lists; set kind: sequence_example");
  for (const auto& [name, ignored] : spec.sequence_features)
    if (context_.declares(name))
      throw ConfigError(path + "sequence_features." + name, "",
                        "is declared in features too; give it one place");
}

bool RecordDecoder::declares(const std::string& name) const {
  return context_.declares(name) || steps_.declares(name);
}

std::vector<int64_t> RecordDecoder::delivered_shape(const std::string& name) const {
  if (context_.declares(name)) return context_.delivered_shape(name);
  std::vector<int64_t> shape = steps_.delivered_shape(name);
  shape.insert(shape.begin(), length_);
  return shape;
}

std::optional<io::ImageInput> RecordDecoder::image_input(const std::string& name) const {
  return context_.declares(name) ? context_.image_input(name) : std::nullopt;
}

std::map<std::string, torch::Tensor> RecordDecoder::allocate(int64_t rows) const {
  std::map<std::string, torch::Tensor> out = context_.allocate(rows);
  for (auto& [name, tensor] : steps_.allocate(rows * length_)) {
    std::vector<int64_t> shape = tensor.sizes().vec();
    shape[0] = length_;
    shape.insert(shape.begin(), rows);
    out[name] = tensor.view(shape);
  }
  return out;
}

void RecordDecoder::decode(std::string_view record, const io::RecordLocation& where, int64_t row,
                           std::map<std::string, torch::Tensor>& out) const {
  if (!sequence_) {
    // Each thread parses into its own Example, whose map and lists keep their memory from the
    // record before.
    thread_local io::Example parsed;
    io::parse_example_into(record, parsed, where);
    return context_.decode(parsed, where, row, out);
  }
  io::SequenceExample parsed = io::parse_sequence_example(record, where);
  context_.decode(io::Example{parsed.context}, where, row, out);
  decode_lists(parsed, where, row, out);
}

void RecordDecoder::decode_lists(const io::SequenceExample& record, const io::RecordLocation& where,
                                 int64_t row, std::map<std::string, torch::Tensor>& out) const {
  for (auto& [name, tensor] : out) {
    if (!steps_.declares(name)) continue;
    auto found = record.feature_lists.find(name);
    size_t length = found == record.feature_lists.end() ? 0 : found->second.size();
    int64_t kept = std::min<int64_t>(static_cast<int64_t>(length), length_);
    torch::Tensor steps = tensor[row];
    for (int64_t t = 0; t < kept; ++t)
      steps[t].copy_(steps_.value(name, &found->second[static_cast<size_t>(t)], where,
                                  fmt::format("{}[{}]", name, t)));
    if (kept < length_) steps.narrow(0, kept, length_ - kept).fill_(pad_);
  }
}

}  // namespace kiln::data

namespace kiln {

void OptionTraits<data::InputNames>::read(const Json& value, data::InputNames& out,
                                          const ReadContext& ctx) {
  data::InputNames names;
  names.listed = value.is_array();
  for (const Json& name : names.listed ? value : Json::array({value})) {
    if (!name.is_string() || name.get<std::string>().empty())
      ctx.fail("expected a feature name or a list of them, got " + show_value(value));
    names.names.push_back(name.get<std::string>());
  }
  if (names.names.empty()) ctx.fail("expected a feature name or a list of them, got []");
  out = std::move(names);
}

Json OptionTraits<data::InputNames>::write(const data::InputNames& value) {
  if (value.listed) return value.names;
  return value.names.front();
}

}  // namespace kiln
