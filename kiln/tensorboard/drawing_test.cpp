#include "kiln/tensorboard/drawing.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::tensorboard {
namespace {

Rgb pixel(const io::Image& image, int64_t y, int64_t x) {
  const uint8_t* p = &image.pixels[static_cast<size_t>((y * image.width + x) * 3)];
  return {p[0], p[1], p[2]};
}

constexpr Rgb kInk{255, 255, 255}, kPaper{0, 0, 0};

TEST(Drawing, DigitsAreThreeByFivePixelsOnePixelApart) {
  Canvas canvas(5, 7, kPaper);
  canvas.number(0, 0, 17, kInk);
  // "1": .#. ##. .#. .#. ###   "7": ### ..# ..# ..# ..#
  const char* expected[5] = {".#..###", "##....#", ".#....#", ".#....#", "###...#"};
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x)
      EXPECT_EQ(pixel(canvas.image(), y, x), expected[y][x] == '#' ? kInk : kPaper)
          << "at " << y << ", " << x;
  EXPECT_EQ(number_width(17), 7);
  EXPECT_EQ(number_width(5, 2), 6);
}

TEST(Drawing, PasteEnlargesAndDrawingOutsideTheCanvasIsCut) {
  Canvas canvas(4, 4, kPaper);
  canvas.paste(1, 1, io::Image{1, 1, 1, {200}}, 2);
  EXPECT_EQ(pixel(canvas.image(), 1, 1), (Rgb{200, 200, 200}));
  EXPECT_EQ(pixel(canvas.image(), 2, 2), (Rgb{200, 200, 200}));
  EXPECT_EQ(pixel(canvas.image(), 3, 3), kPaper);
  canvas.fill(-5, -5, 100, 100, kInk);  // no write past the pixels
  EXPECT_EQ(pixel(canvas.image(), 3, 3), kInk);
}

TEST(Drawing, SampleGridFramesRightGreenAndWrongRed) {
  io::Image grey{28, 28, 1, std::vector<uint8_t>(28 * 28, 128)};
  std::vector<Sample> samples = {{grey, 3, 3, {}}, {grey, 3, 5, {}}, {grey, 1, 1, {}}};
  io::Image grid = sample_grid(samples);
  // 28 px enlarged twice; cells of 56 + frame 4 + gap 4 wide, 56 + 4 + caption 14 + 4 high, in
  // two columns (the square root of 3, rounded up) and two rows.
  EXPECT_EQ(grid.width, 2 * 64 + 4);
  EXPECT_EQ(grid.height, 2 * 78 + 4);
  EXPECT_EQ(pixel(grid, 4, 4), (Rgb{40, 200, 60})) << "first sample: predicted right";
  EXPECT_EQ(pixel(grid, 4, 4 + 64), (Rgb{230, 40, 40})) << "second: wrong";
  EXPECT_EQ(pixel(grid, 4 + 2 + 10, 4 + 2 + 10), (Rgb{128, 128, 128})) << "the image inside";
}

TEST(Drawing, ReconstructionsStandBesideTheirInputs) {
  io::Image dark{8, 8, 1, std::vector<uint8_t>(64, 10)},
      light{8, 8, 1, std::vector<uint8_t>(64, 250)};
  io::Image grid = sample_grid({{dark, {}, {}, light}});
  // 8 px enlarged 8 times: input at x 6..69, reconstruction 4 px after it.
  EXPECT_EQ(pixel(grid, 10, 10), (Rgb{10, 10, 10}));
  EXPECT_EQ(pixel(grid, 10, 6 + 64 + 4 + 10), (Rgb{250, 250, 250}));
  EXPECT_EQ(grid.width, 4 + 2 * 64 + 4 + 4 + 4);
}

TEST(Drawing, ConfusionCellsAreShadedByTheirShareOfTheRow) {
  io::Image image = confusion_image({{5, 0}, {1, 4}});
  // Cells of 32 px below two lines of 18 px (the axis titles, the column numbers) and right of
  // the row labels' margin: "TRUE" is the widest label, 4 characters of 8 px less 2, then 10.
  const int64_t top = 36, left = 30 + 10;
  EXPECT_EQ(image.width, left + std::max<int64_t>(2 * 32, 80));
  EXPECT_EQ(image.height, top + 2 * 32);
  Rgb full = pixel(image, top + 1, left + 1), empty = pixel(image, top + 1, left + 32 + 1),
      most = pixel(image, top + 32 + 1, left + 32 + 1);
  EXPECT_EQ(full, (Rgb{8, 48, 107}));
  EXPECT_EQ(empty, (Rgb{255, 255, 255}));
  EXPECT_LT(most[0], 255);
  EXPECT_GT(most[0], full[0]);
  // The count 5 in white on its dark cell: the top bar of the 5 is at the cell's digit row.
  EXPECT_EQ(pixel(image, top + (32 - 10) / 2, left + (32 - 5) / 2), (Rgb{255, 255, 255}));
}

TEST(Drawing, ConfusionRowsAreLabelledWithTheClassNames) {
  io::Image unnamed = confusion_image({{5, 0}, {1, 4}});
  io::Image named = confusion_image({{5, 0}, {1, 4}}, {"ankle boot", "bag"});
  // "ANKLE BOOT 0": 12 characters of 8 px less 2, then 10: the matrix moves right.
  EXPECT_EQ(named.width - unnamed.width, (12 * 8 - 2 + 10) - (4 * 8 - 2 + 10));
  // The "A" of the first row's name, in black at the row's text line: its top is the middle
  // pixel of ".#.".
  EXPECT_EQ(pixel(named, 36 + 11, 4 + 2), (Rgb{0, 0, 0}));
}

TEST(Drawing, TextIsDrawnInCapitalsWithAQuestionMarkForUnknownCharacters) {
  Canvas lower(5, 3, kPaper), upper(5, 3, kPaper), unknown(5, 3, kPaper);
  lower.text(0, 0, "k", kInk);
  upper.text(0, 0, "K", kInk);
  unknown.text(0, 0, "\x01", kInk);
  EXPECT_EQ(lower.image().pixels, upper.image().pixels);
  // "?": ### ..# .#. ... .#.
  const char* expected[5] = {"###", "..#", ".#.", "...", ".#."};
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 3; ++x)
      EXPECT_EQ(pixel(unknown.image(), y, x), expected[y][x] == '#' ? kInk : kPaper);
  EXPECT_EQ(text_width("abc"), 11);
  EXPECT_EQ(text_width(""), 0);
}

TEST(Drawing, SampleCaptionsNameTheClassesWhenGivenNames) {
  io::Image grey{28, 28, 1, std::vector<uint8_t>(28 * 28, 128)};
  io::Image numbered = sample_grid({{grey, 0, 1, {}}});
  io::Image named = sample_grid({{grey, 0, 1, {}}}, {"coat", "bag"});
  EXPECT_EQ(named.width, numbered.width);
  EXPECT_EQ(named.height, numbered.height);
  EXPECT_NE(named.pixels, numbered.pixels);
  // The second line, the predicted "BAG" in the wrong prediction's red: B's top row is "##.".
  int64_t second_line = 4 + 56 + 4 + 2 + 7;
  EXPECT_EQ(pixel(named, second_line, 4), (Rgb{230, 40, 40}));
}

}  // namespace
}  // namespace kiln::tensorboard
