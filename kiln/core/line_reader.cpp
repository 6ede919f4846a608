#include "kiln/core/line_reader.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "kiln/core/error.h"
#include "kiln/core/regular_file.h"

namespace kiln {

namespace {
constexpr size_t kChunk = size_t{1} << 20;
}

LineReader::LineReader(std::string path, size_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes), fd_(open_regular_file(path_)) {}

LineReader::~LineReader() { ::close(fd_); }

bool LineReader::fill() {
  if (ended_) return false;
  buffer_.erase(0, start_);
  start_ = 0;
  size_t held = buffer_.size();
  buffer_.resize(held + kChunk);
  ssize_t got;
  do got = ::read(fd_, &buffer_[held], kChunk);
  while (got < 0 && errno == EINTR);
  if (got < 0) throw IoError("read", path_, errno);
  buffer_.resize(held + size_t(got));
  ended_ = got == 0;
  return !ended_;
}

bool LineReader::next(std::string& line) {
  size_t searched = start_;
  while (true) {
    size_t end = buffer_.find('\n', searched);
    if (end == std::string::npos && buffer_.size() - start_ > max_line_bytes_) end = buffer_.size();
    if (end != std::string::npos && end - start_ > max_line_bytes_)
      throw DataError(path_, number_ + 1, -1,
                      fmt::format("line {} is longer than {} bytes", number_ + 1, max_line_bytes_));
    if (end != std::string::npos) {
      line.assign(buffer_, start_, end - start_);
      start_ = end + 1;
      ++number_;
      return true;
    }
    searched = buffer_.size();
    size_t offset = searched - start_;
    if (!fill()) break;
    searched = start_ + offset;
  }
  if (start_ >= buffer_.size()) return false;
  line.assign(buffer_, start_, std::string::npos);  // the last line, without a newline
  start_ = buffer_.size();
  ++number_;
  return true;
}

}  // namespace kiln
