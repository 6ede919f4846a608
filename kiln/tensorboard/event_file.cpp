#include "kiln/tensorboard/event_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/io/tfrecord.h"
#include "kiln/tensorboard/proto/event.pb.h"

namespace kiln::tensorboard {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "events.out.tfevents.";

// The seconds field of an event file name (the 10 digits after the prefix), or -1.
int64_t seconds_in_name(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return -1;
  size_t at = std::char_traits<char>::length(kPrefix), end = name.find('.', at);
  if (end == std::string::npos || end == at || end - at > 18) return -1;
  int64_t seconds = 0;
  for (size_t i = at; i < end; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    seconds = seconds * 10 + (name[i] - '0');
  }
  return seconds;
}

int64_t latest_seconds_in(const std::string& directory) {
  int64_t latest = -1;
  for (const auto& entry : fs::directory_iterator(directory))
    latest = std::max(latest, seconds_in_name(entry.path().filename().string()));
  return latest;
}

// Distinguishes the files one process opens within the same second.
std::atomic<int> files_opened{0};

}  // namespace

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "localhost";
  return host;
}

EventFile::EventFile(const std::string& directory, const EventFileName& name) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw IoError("create the directory", directory, error.value());
  int64_t seconds =
      std::max(static_cast<int64_t>(std::floor(name.wall_time)), latest_seconds_in(directory) + 1);
  path_ = (fs::path(directory) /
           fmt::format("{}{:010d}.{}.{}.{}", kPrefix, seconds, name.host, name.pid, files_opened++))
              .string();
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) throw IoError("create", path_, errno);
  proto::Event first;
  first.set_wall_time(name.wall_time);
  first.set_file_version("brain.Event:2");
  first.mutable_source_metadata()->set_writer("kiln");
  write(first);
  flush();
}

EventFile::~EventFile() {
  if (file_) std::fclose(file_);
}

void EventFile::write(const proto::Event& event) {
  std::string framed = io::frame_tfrecord(event.SerializeAsString());
  if (std::fwrite(framed.data(), 1, framed.size(), file_) != framed.size())
    throw IoError("write", path_, errno);
}

void EventFile::flush() {
  if (std::fflush(file_) != 0) throw IoError("write", path_, errno);
}

}  // namespace kiln::tensorboard
