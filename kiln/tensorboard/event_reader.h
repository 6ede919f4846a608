#pragma once
// Reading kiln's event files back, for the board and the report: the images and histograms a
// run logged. The
// files are outside input by then (copied, cut short by a crash, damaged on disk): a damaged
// record ends its file with what was read before it, and the problem is reported, never thrown.
// Thread-safety: functions of their arguments; they only read files.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tensorboard {

struct StoredImage {
  std::string tag;
  int64_t step = 0;
  int64_t height = 0, width = 0;
  std::string png;
};

struct StoredImages {
  std::vector<StoredImage> images;    // in the order TensorBoard reads them
  std::vector<std::string> problems;  // damaged files, each naming the file and record
};

/// Every image of the event files in `directory` (not its subdirectories).
StoredImages read_images(const std::string& directory);

/// The images of one event file (what the fuzz target feeds).
StoredImages read_file_images(const std::string& path);

/// A histogram as TensorFlow stores it: counts[i] of the values in (limits[i-1], limits[i]],
/// the first bucket's from `min`. Checked: as many counts as limits, limits rising, counts
/// finite and >= 0, min <= max.
struct StoredHistogram {
  std::string tag;
  int64_t step = 0;
  double min = 0, max = 0;
  std::vector<double> limits, counts;
};

struct StoredHistograms {
  std::vector<StoredHistogram> histograms;  // in the order TensorBoard reads them
  std::vector<std::string> problems;        // damaged files and histograms, each named
};

/// Every histogram of the event files in `directory` (not its subdirectories).
StoredHistograms read_histograms(const std::string& directory);

/// The histograms of one event file (what the fuzz target feeds).
StoredHistograms read_file_histograms(const std::string& path);

}  // namespace kiln::tensorboard
