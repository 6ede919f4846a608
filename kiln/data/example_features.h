#pragma once
// How a dataset turns tf.Example features into tensors: a declared spec per feature (dtype, shape,
// encoding of bytes, default for a missing value, scale, channels-first), and a decoder that
// writes one record's features into row `row` of preallocated [N, ...shape] tensors. Every
// mismatch between a record and its spec is a DataError naming the file, the record, its byte
// offset and the feature.
// Thread-safety: FeatureDecoder is immutable after construction; decode() may run on several
// threads at once when they write different rows.

#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/schema.h"
#include "kiln/io/example.h"
#include "kiln/io/image_input.h"

namespace kiln::data {

/// The dtype a feature is delivered in.
enum class FeatureDtype { kFloat32, kInt64, kUint8 };
inline EnumNameList<FeatureDtype> enum_names(FeatureDtype) {
  return {{FeatureDtype::kFloat32, "float32"},
          {FeatureDtype::kInt64, "int64"},
          {FeatureDtype::kUint8, "uint8"}};
}
/// How a feature's bytes_list is read: as raw bytes, or as one encoded image.
enum class FeatureEncoding { kRaw, kPng, kJpeg };
inline EnumNameList<FeatureEncoding> enum_names(FeatureEncoding) {
  return {{FeatureEncoding::kRaw, "raw"},
          {FeatureEncoding::kPng, "png"},
          {FeatureEncoding::kJpeg, "jpeg"}};
}
/// What the records hold: tf.Example or tf.SequenceExample.
enum class RecordKind { kExample, kSequenceExample };
inline EnumNameList<RecordKind> enum_names(RecordKind) {
  return {{RecordKind::kExample, "example"}, {RecordKind::kSequenceExample, "sequence_example"}};
}

/// A dataset's `input`: one feature's name (`input: image`), or a list of names that feature
/// columns turn into one vector (`input: [a, b]`, even of one name; docs/tabular.md).
struct InputNames {
  std::vector<std::string> names;
  bool listed = false;
};

struct FeatureSpec {
  FeatureDtype dtype = FeatureDtype::kFloat32;
  std::vector<int64_t> shape;
  FeatureEncoding encoding = FeatureEncoding::kRaw;
  Json default_value = nullptr;
  double scale = 1.0;
  bool channels_first = false;
  void describe(Schema& s);
};

/// Decodes the declared features of records into tensors.
class FeatureDecoder {
 public:
  /// `specs` by feature name; `path` is where they sit in the config, for errors.
  FeatureDecoder(std::map<std::string, FeatureSpec> specs, const std::string& path);

  /// Empty tensors of `rows` examples, one per feature, in the delivered shape and dtype.
  std::map<std::string, torch::Tensor> allocate(int64_t rows) const;
  /// Writes the features of `example` into row `row` of `out`.
  void decode(const io::Example& example, const io::RecordLocation& where, int64_t row,
              std::map<std::string, torch::Tensor>& out) const;
  /// One feature's value as delivered (shape, dtype, scale, layout); `label` names it in errors
  /// (e.g. "frames[3]" for a step of a feature list).
  torch::Tensor value(const std::string& name, const io::Feature* feature,
                      const io::RecordLocation& where, const std::string& label) const;
  bool declares(const std::string& name) const { return specs_.count(name) > 0; }
  /// Shape of one example of `feature` as delivered (channels first when asked).
  std::vector<int64_t> delivered_shape(const std::string& feature) const;
  /// How an encoded image becomes `feature`, for a PNG or JPEG feature; none for others.
  std::optional<io::ImageInput> image_input(const std::string& feature) const;

 private:
  torch::Tensor values_of(const std::string& label, const FeatureSpec& spec,
                          const io::Feature* feature, const io::RecordLocation& where) const;

  std::map<std::string, FeatureSpec> specs_;
};

/// Decodes whole records, tf.Example or tf.SequenceExample. For a SequenceExample, `features`
/// are its context and `sequence_features` its feature lists, each delivered as
/// [steps, ...shape]: longer lists are cut to `steps`, shorter ones (or missing) padded with
/// `pad`.
struct RecordSpec {
  RecordKind kind = RecordKind::kExample;
  std::map<std::string, FeatureSpec> features;
  std::map<std::string, FeatureSpec> sequence_features;
  int64_t steps = 0;
  double pad = 0;
};

class RecordDecoder {
 public:
  /// `path` prefixes the config paths of errors ("" or e.g. "data.train.").
  RecordDecoder(const RecordSpec& spec, const std::string& path);

  std::map<std::string, torch::Tensor> allocate(int64_t rows) const;
  /// Parses one serialized record and writes its features into row `row` of `out`.
  void decode(std::string_view record, const io::RecordLocation& where, int64_t row,
              std::map<std::string, torch::Tensor>& out) const;
  std::vector<int64_t> delivered_shape(const std::string& name) const;
  bool declares(const std::string& name) const;
  /// A context feature's image input (FeatureDecoder::image_input); none for a feature list.
  std::optional<io::ImageInput> image_input(const std::string& name) const;

 private:
  void decode_lists(const io::SequenceExample& record, const io::RecordLocation& where, int64_t row,
                    std::map<std::string, torch::Tensor>& out) const;

  bool sequence_;
  FeatureDecoder context_, steps_;
  int64_t length_;
  double pad_;
};

}  // namespace kiln::data

namespace kiln {

template <>
struct OptionTraits<data::InputNames> {
  static void read(const Json& value, data::InputNames& out, const ReadContext& ctx);
  static Json write(const data::InputNames& value);
  static std::string type_name(const data::InputNames&) { return "string | list of string"; }
};

}  // namespace kiln
