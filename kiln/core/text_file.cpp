#include "kiln/core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>

#include "kiln/core/error.h"
#include "kiln/core/regular_file.h"

namespace kiln {

namespace {

// Closes the descriptor whichever way the read ends.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// `count` bytes from `offset`, fewer when the file was cut short meanwhile.
std::string read_range(int fd, const std::string& path, size_t offset, size_t count) {
  std::string bytes(count, '\0');
  size_t done = 0;
  while (done < count) {
    ssize_t n = ::pread(fd, bytes.data() + done, count - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("read", path, errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

std::string read_opened_file(int fd, const std::string& path, size_t max_bytes) {
  size_t size = regular_file_size(fd, path);
  if (size > max_bytes)
    throw DataError(
        path, -1, -1,
        fmt::format("is {} bytes, more than the {} kiln reads from such a file", size, max_bytes));
  return read_range(fd, path, 0, size);  // one grown meanwhile is read to `size`
}

// O_NONBLOCK: opening a FIFO with no writer must not wait; the fstat then refuses it.
int open_for_reading(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

}  // namespace

std::string read_whole_file(const std::string& path, size_t max_bytes) {
  FileDescriptor file{open_for_reading(path)};
  if (file.fd < 0) throw IoError("open", path, errno);
  return read_opened_file(file.fd, path, max_bytes);
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  return read_whole_file(path, max_bytes);
}

std::optional<std::string> read_text_file_if_any(const std::string& path, size_t max_bytes) {
  FileDescriptor file{open_for_reading(path)};
  if (file.fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return std::nullopt;
  if (file.fd < 0) throw IoError("open", path, errno);
  return read_opened_file(file.fd, path, max_bytes);
}

std::optional<FilePart> read_file_part(const std::string& path, int64_t from, size_t max_bytes) {
  FileDescriptor file{open_for_reading(path)};
  if (file.fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return std::nullopt;
  if (file.fd < 0) throw IoError("open", path, errno);
  FilePart part;
  size_t size = regular_file_size(file.fd, path);
  part.size = static_cast<int64_t>(size);
  part.from = from < 0 ? std::max<int64_t>(0, part.size + from) : std::min(from, part.size);
  size_t count = std::min(max_bytes, size - static_cast<size_t>(part.from));
  part.bytes = read_range(file.fd, path, static_cast<size_t>(part.from), count);
  return part;
}

std::string read_text_line(const std::string& path) {
  std::string text = read_text_file(path);
  text.resize(std::min(text.size(), text.find('\n')));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("create", temporary, errno);
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      throw IoError("write", temporary, error);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw IoError("flush", temporary, errno);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw IoError("rename", temporary, errno);
}

std::string read_kernel_file(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text(max_bytes, '\0');
  size_t size = 0;
  ssize_t got;
  while (size < text.size() && (got = ::read(fd, &text[size], text.size() - size)) > 0)
    size += size_t(got);
  ::close(fd);
  text.resize(size);
  return text;
}

}  // namespace kiln
