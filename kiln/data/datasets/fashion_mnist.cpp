// fashion_mnist: Zalando's Fashion-MNIST from its IDX files (Debian: dataset-fashion-mnist).

#include "kiln/data/dataset.h"
#include "kiln/data/idx_tensors.h"
#include "kiln/io/idx.h"

namespace kiln::data {
namespace {

// The two parts Fashion-MNIST is published in.
enum class FashionMnistSplit { kTrain, kTest };
EnumNameList<FashionMnistSplit> enum_names(FashionMnistSplit) {
  return {{FashionMnistSplit::kTrain, "train"}, {FashionMnistSplit::kTest, "test"}};
}

struct FashionMnistOptions {
  std::string root = "/usr/share/datasets/fashion-mnist";
  FashionMnistSplit split = FashionMnistSplit::kTrain;
  int64_t limit = 0;
  void describe(Schema& s) {
    s.field("root", root, "Folder holding the four IDX files, gzipped or not.");
    s.field("split", split, "Which part: train (60000 images) or test (10000).");
    s.field("limit", limit, "Keep only the first N examples (0 = all), for quick runs.").min(0);
  }
};

// The array of `stem` (gzipped or not) and the path it came from.
std::pair<io::IdxArray, std::string> read_part(const std::string& root, const std::string& stem) {
  for (const char* suffix : {".gz", ""}) {
    std::string path = root + "/" + stem + suffix;
    if (FILE* probe = std::fopen(path.c_str(), "rb")) {
      std::fclose(probe);
      return {io::read_idx(path), path};
    }
  }
  throw Error("Fashion-MNIST file " + root + "/" + stem +
              "[.gz] not found; install the Debian package dataset-fashion-mnist "
              "(scripts/install-deps.sh does) or set the dataset's root");
}

class FashionMnist : public TensorDataset {
 public:
  explicit FashionMnist(const FashionMnistOptions& options)
      : TensorDataset(load(options, "images"), load(options, "labels")) {}
  // As the dataset's own README names them.
  DatasetInfo info() const override {
    DatasetInfo info = TensorDataset::info();
    info.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                        "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    info.image_input = unit_scaled_chw_image(input_shape());
    return info;
  }

 private:
  static torch::Tensor load(const FashionMnistOptions& options, const std::string& part) {
    std::string prefix = options.split == FashionMnistSplit::kTrain ? "train" : "t10k";
    std::string stem = prefix + (part == "images" ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
    auto [array, path] = read_part(options.root, stem);
    torch::Tensor data = part == "images" ? idx_images(array, path) : idx_labels(array, path);
    if (options.limit > 0 && options.limit < data.size(0)) data = data.slice(0, 0, options.limit);
    return data;
  }
};

}  // namespace

KILN_REGISTER(dataset_registry, "fashion_mnist", FashionMnist, FashionMnistOptions,
              "Fashion-MNIST 28x28 grayscale clothing images in 10 classes, scaled to [0, 1].");

}  // namespace kiln::data
