#pragma once
// Whole-file reads and atomic writes (write a temporary, fsync, rename), so a crash never leaves a
// half-written run file behind. Every whole-file read of kiln goes through read_whole_file: the
// file must be a regular file whose size, taken from the opened descriptor before any read, is
// within a limit. A path linked to /dev/zero, a FIFO or a folder is refused, never read forever.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// The most a text file kiln reads whole may hold (256 MiB): configs, run files, manifests.
constexpr size_t kMaxTextFileBytes = size_t{256} << 20;

/// The bytes of the regular file at `path`, at most `max_bytes` of them. Throws IoError when it
/// cannot be opened or read, DataError naming the path when it is not a regular file or is larger.
std::string read_whole_file(const std::string& path, size_t max_bytes);

/// read_whole_file with the text limit.
std::string read_text_file(const std::string& path, size_t max_bytes = kMaxTextFileBytes);
/// Reads a file, or nothing when there is none (readers of other processes' files that may not be
/// there yet); a file that is there but cannot be read throws as read_text_file does.
std::optional<std::string> read_text_file_if_any(const std::string& path,
                                                 size_t max_bytes = kMaxTextFileBytes);
/// Part of a file that another process may still be appending to (metrics.csv).
struct FilePart {
  std::string bytes;
  int64_t from = 0;  // where `bytes` begin
  int64_t size = 0;  // the file's size when it was opened
};
/// The bytes of the regular file at `path` from `from` (counted from the end when negative:
/// -N is the last N bytes) to its end, at most `max_bytes` of them; `from` past the end gives
/// none. Nothing when there is no file; one that is not a regular file throws as read_text_file.
std::optional<FilePart> read_file_part(const std::string& path, int64_t from,
                                       size_t max_bytes = kMaxTextFileBytes);
/// The first line of a file of one word or line (a pointer, a pid, a token), without the
/// trailing newline or spaces.
std::string read_text_line(const std::string& path);
/// A file of the kernel's (/proc, /sys), whose size reads as 0: read to its end, at most
/// `max_bytes`; "" when it cannot be opened (the kernel has none, or hides it).
std::string read_kernel_file(const std::string& path, size_t max_bytes);
/// Replaces `path` with `content` atomically; throws IoError.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace kiln
