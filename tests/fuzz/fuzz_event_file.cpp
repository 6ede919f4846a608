// TensorBoard event files as kiln reads them back for `kiln board` and `kiln report` (the images a
// run logged): TFRecord framing of Event protos, plain or compressed. Damage must end the file
// with a problem naming it, never a crash, an exception or an allocation sized from the bytes.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/tensorboard/event_reader.h"
#include "tests/fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  kiln::tensorboard::StoredImages read =
      kiln::tensorboard::read_file_images(kiln::fuzz::write_temp_file(bytes));
  size_t total = 0;
  for (const auto& image : read.images) total += image.png.size() + image.tag.size();
  if (total > size) std::abort();  // images are cut from the file's own bytes
  return 0;
}
