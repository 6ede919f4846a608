#include "kiln/tensorboard/drawing.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kiln/core/error.h"

namespace kiln::tensorboard {
namespace {

// Rows of each character, three bits per row, the leftmost pixel the highest bit; letters are
// capitals (small letters are drawn as them).
constexpr uint8_t kDigits[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};
constexpr uint8_t kLetters[26][5] = {
    {2, 5, 7, 5, 5}, {6, 5, 6, 5, 6}, {3, 4, 4, 4, 3}, {6, 5, 5, 5, 6}, {7, 4, 6, 4, 7},
    {7, 4, 6, 4, 4}, {3, 4, 5, 5, 3}, {5, 5, 7, 5, 5}, {7, 2, 2, 2, 7}, {1, 1, 1, 5, 2},
    {5, 5, 6, 5, 5}, {4, 4, 4, 4, 7}, {5, 7, 7, 5, 5}, {6, 5, 5, 5, 5}, {2, 5, 5, 5, 2},
    {6, 5, 6, 4, 4}, {2, 5, 5, 6, 3}, {6, 5, 6, 5, 5}, {3, 4, 2, 1, 6}, {7, 2, 2, 2, 2},
    {5, 5, 5, 5, 7}, {5, 5, 5, 5, 2}, {5, 5, 7, 7, 5}, {5, 5, 2, 5, 5}, {5, 5, 2, 2, 2},
    {7, 1, 2, 4, 7}};
struct Symbol {
  char character;
  uint8_t rows[5];
};
constexpr Symbol kSymbols[] = {
    {' ', {0, 0, 0, 0, 0}}, {'-', {0, 0, 7, 0, 0}}, {'/', {1, 1, 2, 4, 4}},
    {'_', {0, 0, 0, 0, 7}}, {'.', {0, 0, 0, 0, 2}}, {':', {0, 2, 0, 2, 0}},
    {'(', {1, 2, 2, 2, 1}}, {')', {4, 2, 2, 2, 4}}, {'+', {0, 2, 7, 2, 0}},
    {'>', {4, 2, 1, 2, 4}}, {'%', {5, 1, 2, 4, 5}}, {'\'', {2, 2, 0, 0, 0}}};
constexpr uint8_t kUnknown[5] = {7, 1, 2, 0, 2};  // '?'

const uint8_t* glyph(char character) {
  if (character >= '0' && character <= '9') return kDigits[character - '0'];
  if (character >= 'A' && character <= 'Z') return kLetters[character - 'A'];
  if (character >= 'a' && character <= 'z') return kLetters[character - 'a'];
  for (const Symbol& symbol : kSymbols)
    if (symbol.character == character) return symbol.rows;
  return kUnknown;
}

constexpr Rgb kWhite{255, 255, 255}, kBlack{0, 0, 0}, kGreen{40, 200, 60}, kRed{230, 40, 40},
    kDark{24, 24, 24}, kGrey{140, 140, 140};

constexpr int64_t kCell = 64;  // what samples are enlarged to, about
constexpr int64_t kFrame = 2, kGap = 4;

int scale_for(const io::Image& image) {
  int64_t side = std::max<int64_t>({image.height, image.width, 1});
  return static_cast<int>(std::clamp<int64_t>(kCell / side, 1, 8));
}

Rgb shade(double share) {  // white for 0, dark blue for 1
  auto mix = [share](int from, int to) {
    return static_cast<uint8_t>(std::lround(from + (to - from) * share));
  };
  return {mix(255, 8), mix(255, 48), mix(255, 107)};
}

// The name of class `index`, or its number where `labels` has none.
std::string class_name(const std::vector<std::string>& labels, int64_t index) {
  return index >= 0 && index < static_cast<int64_t>(labels.size()) ? labels[size_t(index)]
                                                                   : std::to_string(index);
}

}  // namespace

Canvas::Canvas(int64_t height, int64_t width, Rgb background) {
  image_ = io::Image{height, width, 3, {}};
  image_.pixels.resize(static_cast<size_t>(height * width * 3));
  fill(0, 0, height, width, background);
}

void Canvas::fill(int64_t top, int64_t left, int64_t height, int64_t width, Rgb colour) {
  for (int64_t y = std::max<int64_t>(top, 0); y < std::min(top + height, image_.height); ++y)
    for (int64_t x = std::max<int64_t>(left, 0); x < std::min(left + width, image_.width); ++x)
      std::copy(colour.begin(), colour.end(), image_.pixels.begin() + (y * image_.width + x) * 3);
}

void Canvas::number(int64_t top, int64_t left, int64_t value, Rgb colour, int scale) {
  text(top, left, std::to_string(value), colour, scale);
}

void Canvas::text(int64_t top, int64_t left, const std::string& text, Rgb colour, int scale) {
  for (char character : text) {
    const uint8_t* rows = glyph(character);
    for (int row = 0; row < 5; ++row)
      for (int column = 0; column < 3; ++column)
        if (rows[row] >> (2 - column) & 1)
          fill(top + row * scale, left + column * scale, scale, scale, colour);
    left += 4 * scale;
  }
}

void Canvas::paste(int64_t top, int64_t left, const io::Image& image, int scale) {
  KILN_ASSERT(image.channels == 1 || image.channels == 3);
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = 0; x < image.width; ++x) {
      const uint8_t* pixel = &image.pixels[(y * image.width + x) * image.channels];
      Rgb colour = image.channels == 1 ? Rgb{pixel[0], pixel[0], pixel[0]}
                                       : Rgb{pixel[0], pixel[1], pixel[2]};
      fill(top + y * scale, left + x * scale, scale, scale, colour);
    }
}

int64_t number_width(int64_t number, int scale) {
  return text_width(std::to_string(number), scale);
}

int64_t text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : static_cast<int64_t>(text.size()) * 4 * scale - scale;
}

io::Image sample_grid(const std::vector<Sample>& samples, const std::vector<std::string>& labels) {
  KILN_ASSERT(!samples.empty());
  const io::Image& first = samples.front().image;
  int scale = scale_for(first);
  bool pairs = samples.front().reconstruction.has_value();
  int64_t image_w = first.width * scale, image_h = first.height * scale;
  int64_t caption = samples.front().truth ? 5 * 2 + kGap : 0;
  int64_t cell_w = (pairs ? 2 * image_w + kGap : image_w) + 2 * kFrame + kGap;
  int64_t cell_h = image_h + 2 * kFrame + caption + kGap;
  auto columns = static_cast<int64_t>(std::ceil(std::sqrt(double(samples.size()))));
  int64_t rows = (static_cast<int64_t>(samples.size()) + columns - 1) / columns;
  Canvas canvas(rows * cell_h + kGap, columns * cell_w + kGap, kDark);
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& sample = samples[i];
    int64_t top = kGap + static_cast<int64_t>(i) / columns * cell_h;
    int64_t left = kGap + static_cast<int64_t>(i) % columns * cell_w;
    bool judged = sample.truth && sample.prediction;
    Rgb frame = !judged ? kGrey : *sample.truth == *sample.prediction ? kGreen : kRed;
    canvas.fill(top, left, image_h + 2 * kFrame, cell_w - kGap, frame);
    canvas.paste(top + kFrame, left + kFrame, sample.image, scale);
    if (sample.reconstruction)
      canvas.paste(top + kFrame, left + kFrame + image_w + kGap, *sample.reconstruction, scale);
    if (!sample.truth) continue;
    int64_t text_top = top + image_h + 2 * kFrame + kGap / 2;
    if (!labels.empty()) {  // two lines of small capitals, cut to the cell's width
      auto fitting = static_cast<size_t>(std::max<int64_t>((cell_w - kGap + 1) / 4, 1));
      canvas.text(text_top, left, class_name(labels, *sample.truth).substr(0, fitting), kWhite);
      if (sample.prediction)
        canvas.text(text_top + 7, left, class_name(labels, *sample.prediction).substr(0, fitting),
                    frame);
      continue;
    }
    canvas.number(text_top, left, *sample.truth, kWhite, 2);
    if (sample.prediction)
      canvas.number(text_top, left + number_width(*sample.truth, 2) + 6, *sample.prediction, frame,
                    2);
  }
  return canvas.image();
}

io::Image confusion_image(const std::vector<std::vector<int64_t>>& counts,
                          const std::vector<std::string>& labels) {
  constexpr int kScale = 2;                  // characters 6x10 pixels: readable unzoomed
  constexpr int64_t kLine = 5 * kScale + 8;  // a row of text and its space
  auto classes = static_cast<int64_t>(counts.size());
  bool named = static_cast<int64_t>(labels.size()) == classes;
  auto row_label = [&](int64_t i) {
    return (named ? labels[size_t(i)] + " " : std::string()) + std::to_string(i);
  };
  int64_t largest = 0, label_width = text_width("true", kScale);
  for (int64_t i = 0; i < classes; ++i) {
    for (int64_t count : counts[size_t(i)]) largest = std::max(largest, count);
    label_width = std::max(label_width, text_width(row_label(i), kScale));
  }
  int64_t cell = std::max<int64_t>(32, number_width(largest, kScale) + 8);
  int64_t margin = label_width + 10, top_margin = 2 * kLine;  // axis titles, then the columns
  Canvas canvas(top_margin + classes * cell, margin + std::max(classes * cell, int64_t(80)),
                kWhite);
  canvas.text(4, 4, "true", kBlack, kScale);
  canvas.text(4, margin, "predicted", kBlack, kScale);
  int64_t digit_top = (cell - 5 * kScale) / 2;
  for (int64_t i = 0; i < classes; ++i) {
    std::string label = row_label(i);
    canvas.text(top_margin + i * cell + digit_top, margin - 6 - text_width(label, kScale), label,
                kBlack, kScale);
    canvas.number(kLine + 4, margin + i * cell + (cell - number_width(i, kScale)) / 2, i, kBlack,
                  kScale);
    int64_t total = 0;
    for (int64_t count : counts[static_cast<size_t>(i)]) total += count;
    for (int64_t j = 0; j < classes; ++j) {
      int64_t count = counts[static_cast<size_t>(i)][static_cast<size_t>(j)];
      double share = total > 0 ? double(count) / double(total) : 0.0;
      int64_t top = top_margin + i * cell, left = margin + j * cell;
      canvas.fill(top, left, cell - 1, cell - 1, shade(share));
      canvas.number(top + digit_top, left + (cell - number_width(count, kScale)) / 2, count,
                    share > 0.5 ? kWhite : kBlack, kScale);
    }
  }
  return canvas.image();
}

}  // namespace kiln::tensorboard
