#pragma once
// Pictures TensorBoard shows that are not a tensor already: a grid of validation inputs with
// their true and predicted classes, inputs beside their reconstructions, and a confusion matrix
// drawn as a heat map with its counts and class names. Text is drawn in a 3x5-pixel font of
// kiln's own (digits, capital letters and a few signs), so no font library is needed.
// Thread-safety: functions of their arguments.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/io/image_codec.h"

namespace kiln::tensorboard {

using Rgb = std::array<uint8_t, 3>;

/// An RGB image to draw on.
class Canvas {
 public:
  Canvas(int64_t height, int64_t width, Rgb background);
  void fill(int64_t top, int64_t left, int64_t height, int64_t width, Rgb colour);
  /// `number`'s decimal digits, each 3x5 pixels times `scale`, one scaled pixel apart.
  void number(int64_t top, int64_t left, int64_t number, Rgb colour, int scale = 1);
  /// `text` in capitals, each character 3x5 pixels times `scale`, one scaled pixel apart; a
  /// character the font lacks is drawn as '?'.
  void text(int64_t top, int64_t left, const std::string& text, Rgb colour, int scale = 1);
  /// `image` (1 or 3 channels) enlarged `scale` times, its top left corner at (top, left).
  void paste(int64_t top, int64_t left, const io::Image& image, int scale = 1);
  const io::Image& image() const { return image_; }

 private:
  io::Image image_;
};

/// Width in pixels of `number` or `text` drawn at `scale`.
int64_t number_width(int64_t number, int scale = 1);
int64_t text_width(const std::string& text, int scale = 1);

/// One validation example to show: its pixels, and for a classifier its classes.
struct Sample {
  io::Image image;  // 1 or 3 channels, 8 bits
  std::optional<int64_t> truth, prediction;
  std::optional<io::Image> reconstruction;  // an autoencoder's output, shown beside the input
};

/// The samples in a grid, each enlarged to about 64 pixels, framed green when predicted right and
/// red when wrong, the true class under it in white and the predicted one in the frame's colour:
/// their numbers, or with `labels` their names (one line each, cut to the sample's width).
io::Image sample_grid(const std::vector<Sample>& samples,
                      const std::vector<std::string>& labels = {});

/// A square matrix of counts (row: true class, column: predicted), each cell shaded by its share
/// of its row, with its count; the axes titled "true" and "predicted", the class numbers along
/// the top and the left, and on the left each class's name when `labels` has one per class.
io::Image confusion_image(const std::vector<std::vector<int64_t>>& counts,
                          const std::vector<std::string>& labels = {});

}  // namespace kiln::tensorboard
