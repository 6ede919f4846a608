// idx: images and labels from any pair of IDX files (MNIST, EMNIST, KMNIST, ...), gzipped or not.

#include "kiln/data/dataset.h"
#include "kiln/data/idx_tensors.h"

namespace kiln::data {
namespace {

struct IdxDatasetOptions {
  std::string images;
  std::string labels;
  int64_t limit = 0;
  void describe(Schema& s) {
    s.field("images", images, "IDX file of unsigned-byte images, [N, H, W] or [N, H, W, C].")
        .require();
    s.field("labels", labels, "IDX file of integer labels, [N].").require();
    s.field("limit", limit, "Keep only the first N examples (0 = all), for quick runs.").min(0);
  }
};

torch::Tensor first(torch::Tensor data, int64_t limit) {
  return limit > 0 && limit < data.size(0) ? data.slice(0, 0, limit) : data;
}

class IdxDataset : public TensorDataset {
 public:
  explicit IdxDataset(const IdxDatasetOptions& o)
      : TensorDataset(first(idx_images(io::read_idx(o.images), o.images), o.limit),
                      first(idx_labels(io::read_idx(o.labels), o.labels), o.limit)),
        labels_(o.labels) {}
  // Label i of a one-dimensional IDX file of bytes sits after the 8-byte header (offsets in the
  // decompressed file).
  ExampleOrigin locate(int64_t index) const override {
    return {{labels_, index, 8 + index}, "labels"};
  }
  DatasetInfo info() const override {
    DatasetInfo info = TensorDataset::info();
    info.image_input = unit_scaled_chw_image(input_shape());
    return info;
  }

 private:
  std::string labels_;
};

}  // namespace

KILN_REGISTER(dataset_registry, "idx", IdxDataset, IdxDatasetOptions,
              "Images and labels from IDX files; pixels scaled to [0, 1], channels first.");

}  // namespace kiln::data
