// image_folder: ROOT/<class>/<image>.png|.jpg, classes numbered in sorted order, held in memory.

#include "kiln/io/image_folder.h"
#include "kiln/data/dataset.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/image_codec.h"

namespace kiln::data {
namespace {

struct ImageFolderOptions {
  std::string root;
  int64_t channels = 3;
  void describe(Schema& s) {
    s.field("root", root, "Folder with one sub-folder of PNG/JPEG images per class.").require();
    s.field("channels", channels, "1 (grayscale), 3 (RGB) or 4 (RGBA); images are converted.")
        .check([](int64_t c) { return c == 1 || c == 3 || c == 4; }, "of 1, 3 or 4");
  }
};

struct LoadedFolder {
  torch::Tensor images, labels;
  std::vector<std::string> classes;
};

// Every image as float32 [C, H, W] in [0, 1]; all must have the first one's size.
LoadedFolder load(const ImageFolderOptions& o) {
  io::ImageFolder folder = io::scan_image_folder(o.root);
  std::vector<torch::Tensor> images;
  std::vector<int64_t> labels;
  for (const auto& entry : folder.images) {
    io::Image image =
        io::decode_image(io::read_file_bytes(entry.path), static_cast<int>(o.channels), entry.path);
    if (!images.empty() && (image.height != images[0].size(1) || image.width != images[0].size(2)))
      throw DataError(entry.path, -1, -1,
                      fmt::format("is {}x{}, the first image {}x{}; all images of a folder "
                                  "dataset must have one size",
                                  image.height, image.width, images[0].size(1), images[0].size(2)));
    images.push_back(torch::from_blob(image.pixels.data(), {image.height, image.width, o.channels},
                                      torch::kUInt8)
                         .permute({2, 0, 1})
                         .to(torch::kFloat32)
                         .div_(255.0));
    labels.push_back(entry.label);
  }
  return {torch::stack(images), torch::tensor(labels, torch::kInt64), folder.classes};
}

class ImageFolderDataset : public TensorDataset {
 public:
  explicit ImageFolderDataset(const ImageFolderOptions& o) : ImageFolderDataset(load(o)) {}
  DatasetInfo info() const override {
    DatasetInfo info = TensorDataset::info();
    info.class_names = classes_;
    info.image_input = unit_scaled_chw_image(input_shape());
    return info;
  }

 private:
  explicit ImageFolderDataset(LoadedFolder data)
      : TensorDataset(std::move(data.images), std::move(data.labels)),
        classes_(std::move(data.classes)) {}
  std::vector<std::string> classes_;
};

}  // namespace

KILN_REGISTER(dataset_registry, "image_folder", ImageFolderDataset, ImageFolderOptions,
              "PNG/JPEG images in one sub-folder per class; pixels scaled to [0, 1].");

}  // namespace kiln::data
