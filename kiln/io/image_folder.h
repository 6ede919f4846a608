#pragma once
// Image folders: `ROOT/<class name>/<image>.png|.jpg|.jpeg`, one sub-folder per class, classes
// numbered in sorted order (as torchvision's ImageFolder and Keras' image_dataset_from_directory
// number them), and their conversion to tf.Example records with the feature names of
// TensorFlow's image converters (`image/encoded`, `image/class/label`, ...).
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/io/convert_idx.h"

namespace kiln::io {

struct ImageFolder {
  std::vector<std::string> classes;  // sorted sub-folder names; a label indexes this
  struct Entry {
    std::string path;
    int64_t label;
  };
  std::vector<Entry> images;  // by class, then by file name
};

/// Whether `path` names a PNG or JPEG file by its extension (.png, .jpg, .jpeg, in any case).
bool is_image_file(const std::string& path);

/// The PNG and JPEG files directly in `dir`, sorted; throws IoError when it cannot be listed.
std::vector<std::string> image_files_in(const std::string& dir);

/// Lists the images under `root`; throws IoError when it cannot be read and Error when it holds
/// no class folder with an image.
ImageFolder scan_image_folder(const std::string& root);

/// Writes one Example per image, in an order shuffled by `seed` so every shard mixes classes:
/// `image/encoded` (the file's bytes), `image/format` (PNG or JPEG), `image/height`,
/// `image/width`, `image/channels`, `image/class/label`, `image/class/text`, `image/filename`.
/// Throws DataError naming a file that is not a readable PNG or JPEG.
void convert_image_folder(const ImageFolder& folder, uint64_t seed, ShardedTfRecordWriter& out,
                          const ConvertProgress& progress = {});

}  // namespace kiln::io
