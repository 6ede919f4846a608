// Feature-spec decoding: what the tfrecord dataset does to each record after parsing it, turning
// its features into the declared tensors (dtype, shape, raw bytes or an encoded image, defaults,
// scale, channels first; the steps of a SequenceExample). The first input byte picks one of the
// specs below, the rest is the serialized record. A record that does not match its spec must be a
// kiln::Error naming it; anything else LibTorch throws, or any crash, is a finding.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/data/example_features.h"

namespace {

using kiln::data::FeatureDtype;
using kiln::data::FeatureEncoding;
using kiln::data::FeatureSpec;
using kiln::data::RecordDecoder;
using kiln::data::RecordKind;
using kiln::data::RecordSpec;

FeatureSpec feature(FeatureDtype dtype, std::vector<int64_t> shape,
                    FeatureEncoding encoding = FeatureEncoding::kRaw) {
  FeatureSpec spec;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.encoding = encoding;
  return spec;
}

FeatureSpec with_default(FeatureSpec spec, double value) {
  spec.default_value = value;
  return spec;
}

// Penguins as TFX writes them: float measurements, an int64 label, a missing value defaulted.
RecordSpec tabular() {
  RecordSpec spec;
  spec.features["culmen_length_mm"] = feature(FeatureDtype::kFloat32, {});
  spec.features["body_mass_g"] = with_default(feature(FeatureDtype::kFloat32, {}), 4000);
  spec.features["species"] = feature(FeatureDtype::kInt64, {});
  spec.features["ints_as_floats"] = with_default(feature(FeatureDtype::kFloat32, {2}), -1);
  return spec;
}

// Images: PNG and JPEG scaled to [0, 1] and put channels first, and raw bytes as MNIST converters
// write them.
RecordSpec images() {
  RecordSpec spec;
  FeatureSpec png = feature(FeatureDtype::kFloat32, {3, 4, 1}, FeatureEncoding::kPng);
  png.scale = 1.0 / 255;
  png.channels_first = true;
  spec.features["image"] = png;
  spec.features["photo"] =
      with_default(feature(FeatureDtype::kUint8, {8, 8, 3}, FeatureEncoding::kJpeg), 0);
  spec.features["raw"] = with_default(feature(FeatureDtype::kUint8, {2, 2}), 7);
  spec.features["label"] = with_default(feature(FeatureDtype::kInt64, {}), 0);
  return spec;
}

// A SequenceExample: a context feature and two feature lists cut or padded to 3 steps.
RecordSpec sequences() {
  RecordSpec spec;
  spec.kind = RecordKind::kSequenceExample;
  spec.steps = 3;
  spec.pad = -1;
  spec.features["length"] = with_default(feature(FeatureDtype::kInt64, {}), 0);
  spec.sequence_features["frames"] = feature(FeatureDtype::kFloat32, {2});
  spec.sequence_features["tokens"] = with_default(feature(FeatureDtype::kInt64, {}), 0);
  return spec;
}

const std::vector<RecordDecoder>& decoders() {
  static const std::vector<RecordDecoder> all{
      {tabular(), "data.train."}, {images(), "data.train."}, {sequences(), "data.train."}};
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const RecordDecoder& decoder = decoders()[data[0] % decoders().size()];
  std::string_view record(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::map<std::string, torch::Tensor> batch = decoder.allocate(2);
  try {
    decoder.decode(record, {"fuzz.tfrecord", 5, 1234}, 1, batch);
  } catch (const kiln::Error&) {
  }
  return 0;
}
