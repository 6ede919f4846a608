#pragma once
// How an encoded image (PNG or JPEG) becomes a model's input exactly as the training data made it
// one: decoded to its channels, laid out channels-first ([C, H, W]) or channels-last ([H, W, C]),
// each 8-bit value multiplied by a scale (1/255 for the image datasets, which deliver [0, 1]).
// Exports record it with their inputs, so that a server can take `{"b64": ...}` images and
// `kiln predict` image files. Images are not resized: a model takes the size it was trained on.
// Thread-safety: values and pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/json.h"

namespace kiln::io {

struct ImageInput {
  int64_t channels = 1, height = 0, width = 0;
  bool channels_first = true;
  double scale = 1.0 / 255;

  /// The shape of one example: [C, H, W] or [H, W, C].
  std::vector<int64_t> shape() const;
  bool operator==(const ImageInput& other) const;
};

/// {"channels": 1, "height": 28, "width": 28, "layout": "chw", "scale": 0.00392...}
Json image_input_json(const ImageInput& image);
/// Reads it back; a DataError naming `file` and what is wrong.
ImageInput parse_image_input(const Json& json, const std::string& file);

/// The input values of one encoded image, row-major in the input's layout. Throws DataError naming
/// `name` for bytes that are no PNG or JPEG, or an image of another size than the input's.
std::vector<double> image_input_values(std::string_view bytes, const ImageInput& image,
                                       const std::string& name);

}  // namespace kiln::io
