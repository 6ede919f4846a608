#pragma once
// One TensorBoard event file: TFRecord framing of serialized Event protos, the first one saying
// `file_version: "brain.Event:2"` (docs/formats.md §3.1). The file is named as
// TensorBoard's own writer names it, `events.out.tfevents.<seconds>.<host>.<pid>.<n>`, and is
// readable while it grows: records are appended and flushed, never renamed into place.
// Thread-safety: one thread.

#include <cstdio>
#include <memory>
#include <string>

namespace kiln::tensorboard {

namespace proto {
class Event;
}

/// Where an event file goes and who writes it; the clock and the names are injected by tests.
struct EventFileName {
  double wall_time = 0;
  std::string host;
  int pid = 0;
};

class EventFile {
 public:
  /// Creates `directory` when missing and a new event file in it. TensorBoard reads the files of
  /// a directory in the order of their names and never goes back to an earlier one, so the new
  /// file's seconds are made later than those of any event file already there: a resumed run's
  /// file must be read after the interrupted run's.
  EventFile(const std::string& directory, const EventFileName& name);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  void write(const proto::Event& event);
  /// Hands what was written to the operating system, where TensorBoard and a crash cannot lose
  /// it; throws IoError.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

/// The name of the local host, as TensorFlow puts it in event file names.
std::string host_name();

}  // namespace kiln::tensorboard
