#pragma once
// The lines of a text file kiln reads one at a time (`kiln predict`'s JSON lines input): opened as
// a regular file only (a FIFO or /dev/zero is refused by name, never waited on or read without
// end), and each line bounded before it is held, so that one long line (a file of zeros without
// a newline) is an error naming the file and line, not gigabytes of memory.
// Thread-safety: one reader per thread.

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class LineReader {
 public:
  /// Opens `path` (IoError when it cannot be opened; DataError when it is no regular file).
  LineReader(std::string path, size_t max_line_bytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// The next line, without its newline; false at the end of the file. A line longer than
  /// `max_line_bytes` is a DataError naming the file and the line's number.
  bool next(std::string& line);
  /// The number of the line next() gave last, from 1.
  int64_t number() const { return number_; }

 private:
  bool fill();  // reads more into buffer_; false at the end

  std::string path_;
  size_t max_line_bytes_;
  int fd_ = -1;
  std::string buffer_;
  size_t start_ = 0;  // where the next line begins in buffer_
  bool ended_ = false;
  int64_t number_ = 0;
};

}  // namespace kiln
