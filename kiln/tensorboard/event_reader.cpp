#include "kiln/tensorboard/event_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/io/tfrecord.h"
#include "kiln/tensorboard/proto/event.pb.h"

namespace kiln::tensorboard {
namespace {

namespace fs = std::filesystem;

void take_images(const proto::Event& event, StoredImages& out) {
  for (const proto::Summary::Value& value : event.summary().value()) {
    if (!value.has_image()) continue;
    const proto::Summary::Image& image = value.image();
    out.images.push_back(
        {value.tag(), event.step(), image.height(), image.width(), image.encoded_image_string()});
  }
}

}  // namespace

StoredImages read_file_images(const std::string& path) {
  StoredImages out;
  try {
    io::TfRecordReader reader(path);
    std::string record;
    while (reader.next(record)) {
      proto::Event event;
      if (!event.ParseFromString(record)) {
        out.problems.push_back(
            fmt::format("{}, record {}, byte offset {}: not an Event; what follows is not read",
                        path, reader.record_index() - 1, reader.record_offset()));
        break;
      }
      take_images(event, out);
    }
  } catch (const Error& e) {
    out.problems.push_back(e.what());  // names the file, the record and its offset
  }
  return out;
}

StoredImages read_images(const std::string& directory) {
  StoredImages out;
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().filename().string().find("tfevents") != std::string::npos)
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    StoredImages some = read_file_images(file);
    out.images.insert(out.images.end(), some.images.begin(), some.images.end());
    out.problems.insert(out.problems.end(), some.problems.begin(), some.problems.end());
  }
  return out;
}

}  // namespace kiln::tensorboard
