#include "kiln/io/convert_idx.h"

#include <cstring>

#include "kiln/core/error.h"
#include "kiln/io/example.h"

namespace kiln::io {
namespace {

int64_t label_at(const IdxArray& labels, int64_t index) {
  const uint8_t* at =
      labels.data.data() + index * static_cast<int64_t>(idx_element_size(labels.type));
  switch (labels.type) {
    case IdxType::kUint8:
      return *at;
    case IdxType::kInt8:
      return static_cast<int8_t>(*at);
    case IdxType::kInt16: {
      int16_t v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case IdxType::kInt32: {
      int32_t v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    default:
      break;
  }
  throw InternalError("label_at: labels are not integers");
}

void check_layout(const IdxArray& images, const std::string& images_path, const IdxArray* labels,
                  const std::string& labels_path) {
  size_t rank = images.dims.size();
  if (images.type != IdxType::kUint8 || rank < 3 || rank > 4)
    throw DataError(images_path, -1, 0,
                    "expected unsigned-byte images of shape [N, H, W] or [N, H, W, C]");
  if (!labels) return;
  bool integer = labels->type == IdxType::kUint8 || labels->type == IdxType::kInt8 ||
                 labels->type == IdxType::kInt16 || labels->type == IdxType::kInt32;
  if (!integer || labels->dims.size() != 1)
    throw DataError(labels_path, -1, 0, "expected integer labels of shape [N]");
  if (labels->dims[0] != images.dims[0])
    throw DataError(
        labels_path, -1, 0,
        fmt::format("{} labels for {} images in {}", labels->dims[0], images.dims[0], images_path));
}

}  // namespace

std::string idx_example(const IdxArray& images, const IdxArray* labels, int64_t index) {
  int64_t height = images.dims[1], width = images.dims[2];
  int64_t channels = images.dims.size() == 4 ? images.dims[3] : 1;
  auto size = static_cast<size_t>(height * width * channels);
  const char* pixels = reinterpret_cast<const char*>(images.data.data()) + size * size_t(index);
  Example example;
  example.features["image"] = bytes_feature({std::string(pixels, size)});
  example.features["height"] = int64_feature({height});
  example.features["width"] = int64_feature({width});
  example.features["channels"] = int64_feature({channels});
  if (labels) example.features["label"] = int64_feature({label_at(*labels, index)});
  return encode_example(example);
}

void convert_idx(const std::string& images_path, const std::string& labels_path,
                 ShardedTfRecordWriter& out, const ConvertProgress& progress) {
  IdxArray images = read_idx(images_path);
  IdxArray labels;
  if (!labels_path.empty()) labels = read_idx(labels_path);
  const IdxArray* label_array = labels_path.empty() ? nullptr : &labels;
  check_layout(images, images_path, label_array, labels_path);
  int64_t count = images.dims[0];
  for (int64_t i = 0; i < count; ++i) {
    out.write(idx_example(images, label_array, i));
    if (progress) progress(i + 1, count);
  }
}

}  // namespace kiln::io
