// TensorBoard event files as kiln reads them back for `kiln board` and `kiln report` (the images
// and histograms a run logged): TFRecord framing of Event protos, plain or compressed. Damage
// must end the file with a problem naming it, never a crash, an exception or an allocation sized
// from the bytes; every histogram returned has passed its checks.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/tensorboard/event_reader.h"
#include "tests/fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string path = kiln::fuzz::write_temp_file(bytes);
  kiln::tensorboard::StoredImages read = kiln::tensorboard::read_file_images(path);
  size_t total = 0;
  for (const auto& image : read.images) total += image.png.size() + image.tag.size();
  if (total > size) std::abort();  // images are cut from the file's own bytes
  for (const auto& histogram : kiln::tensorboard::read_file_histograms(path).histograms) {
    if (histogram.limits.size() != histogram.counts.size() || !(histogram.min <= histogram.max))
      std::abort();
    for (size_t i = 0; i < histogram.counts.size(); ++i)
      if (!(histogram.counts[i] >= 0) ||
          (i > 0 && !(histogram.limits[i] > histogram.limits[i - 1])))
        std::abort();
  }
  return 0;
}
