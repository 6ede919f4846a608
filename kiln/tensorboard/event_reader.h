#pragma once
// Reading kiln's event files back, for the board and the report: the images a run logged. The
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

}  // namespace kiln::tensorboard
