#include "kiln/data/idx_tensors.h"

#include "kiln/core/error.h"

namespace kiln::data {
namespace {

torch::Dtype integer_dtype(io::IdxType type) {
  switch (type) {
    case io::IdxType::kUint8:
      return torch::kUInt8;
    case io::IdxType::kInt8:
      return torch::kInt8;
    case io::IdxType::kInt16:
      return torch::kInt16;
    case io::IdxType::kInt32:
      return torch::kInt32;
    default:
      break;
  }
  return torch::kFloat32;  // not an integer type; callers reject it
}

torch::Tensor as_tensor(const io::IdxArray& array, torch::Dtype dtype) {
  return torch::from_blob(const_cast<uint8_t*>(array.data.data()), array.dims, dtype).clone();
}

}  // namespace

torch::Tensor idx_images(const io::IdxArray& images, const std::string& path) {
  size_t rank = images.dims.size();
  if (images.type != io::IdxType::kUint8 || rank < 3 || rank > 4)
    throw DataError(path, -1, 0,
                    "expected unsigned-byte images of shape [N, H, W] or [N, H, W, C]");
  torch::Tensor pixels = as_tensor(images, torch::kUInt8);
  pixels = rank == 3 ? pixels.unsqueeze(1) : pixels.permute({0, 3, 1, 2}).contiguous();
  return pixels.to(torch::kFloat32).div_(255.0);
}

torch::Tensor idx_labels(const io::IdxArray& labels, const std::string& path) {
  torch::Dtype dtype = integer_dtype(labels.type);
  if (dtype == torch::kFloat32 || labels.dims.size() != 1)
    throw DataError(path, -1, 0, "expected integer labels of shape [N]");
  return as_tensor(labels, dtype).to(torch::kInt64);
}

}  // namespace kiln::data
