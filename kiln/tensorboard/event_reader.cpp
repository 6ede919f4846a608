#include "kiln/tensorboard/event_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/io/tfrecord.h"
#include "kiln/tensorboard/proto/event.pb.h"

namespace kiln::tensorboard {
namespace {

namespace fs = std::filesystem;

void take_images(const proto::Event& event, const std::string&, StoredImages& out) {
  for (const proto::Summary::Value& value : event.summary().value()) {
    if (!value.has_image()) continue;
    const proto::Summary::Image& image = value.image();
    out.images.push_back(
        {value.tag(), event.step(), image.height(), image.width(), image.encoded_image_string()});
  }
}

// What is wrong with a histogram as stored, or "".
std::string histogram_problem(const proto::HistogramProto& histogram) {
  if (histogram.bucket_limit_size() != histogram.bucket_size())
    return fmt::format("{} bucket limits for {} buckets", histogram.bucket_limit_size(),
                       histogram.bucket_size());
  if (!(histogram.min() <= histogram.max())) return "its min is not at most its max";
  for (int i = 0; i < histogram.bucket_size(); ++i) {
    if (!std::isfinite(histogram.bucket(i)) || histogram.bucket(i) < 0)
      return fmt::format("bucket {} holds {}", i, histogram.bucket(i));
    if (i > 0 && !(histogram.bucket_limit(i) > histogram.bucket_limit(i - 1)))
      return fmt::format("bucket limit {} does not rise", i);
  }
  return "";
}

void take_histograms(const proto::Event& event, const std::string& path, StoredHistograms& out) {
  for (const proto::Summary::Value& value : event.summary().value()) {
    if (!value.has_histo()) continue;
    const proto::HistogramProto& histogram = value.histo();
    std::string problem = histogram_problem(histogram);
    if (!problem.empty()) {
      out.problems.push_back(fmt::format("{}: histogram {} at step {}: {}; it is left out", path,
                                         value.tag(), event.step(), problem));
      continue;
    }
    out.histograms.push_back({value.tag(),
                              event.step(),
                              histogram.min(),
                              histogram.max(),
                              {histogram.bucket_limit().begin(), histogram.bucket_limit().end()},
                              {histogram.bucket().begin(), histogram.bucket().end()}});
  }
}

// Each event of the file at `path` given to `take`, until a damaged record, which is reported.
template <class Stored, class Take>
Stored read_file(const std::string& path, Take take) {
  Stored out;
  // A FIFO in an event file's place held a board's worker forever in open(): only regular files
  // are read (checked first, as the reader opens the path by name).
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    out.problems.push_back(path +
                           ": not a regular file (a FIFO, a device or a folder); kiln reads "
                           "event files only as regular files");
    return out;
  }
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
      take(event, path, out);
    }
  } catch (const Error& e) {
    out.problems.push_back(e.what());  // names the file, the record and its offset
  }
  return out;
}

// The event files of `directory` in the order TensorBoard reads them.
std::vector<std::string> event_files(const std::string& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().filename().string().find("tfevents") != std::string::npos)
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

StoredImages read_file_images(const std::string& path) {
  return read_file<StoredImages>(path, take_images);
}

StoredImages read_images(const std::string& directory) {
  StoredImages out;
  for (const std::string& file : event_files(directory)) {
    StoredImages some = read_file_images(file);
    out.images.insert(out.images.end(), some.images.begin(), some.images.end());
    out.problems.insert(out.problems.end(), some.problems.begin(), some.problems.end());
  }
  return out;
}

StoredHistograms read_file_histograms(const std::string& path) {
  return read_file<StoredHistograms>(path, take_histograms);
}

StoredHistograms read_histograms(const std::string& directory) {
  StoredHistograms out;
  for (const std::string& file : event_files(directory)) {
    StoredHistograms some = read_file_histograms(file);
    out.histograms.insert(out.histograms.end(), some.histograms.begin(), some.histograms.end());
    out.problems.insert(out.problems.end(), some.problems.begin(), some.problems.end());
  }
  return out;
}

}  // namespace kiln::tensorboard
