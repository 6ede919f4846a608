#pragma once
// Whole-file text reads and atomic writes (write a temporary, fsync, rename), so a crash never
// leaves a half-written run file behind.

#include <optional>
#include <string>

namespace kiln {

/// Reads a file; throws IoError naming the path.
std::string read_text_file(const std::string& path);
/// Reads a file, or nothing when it cannot be opened (readers of other processes' files that
/// may not be there yet).
std::optional<std::string> read_text_file_if_any(const std::string& path);
/// A file of one word or line (a pointer, a pid), without the trailing newline or spaces.
std::string read_text_line(const std::string& path);
/// Replaces `path` with `content` atomically; throws IoError.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace kiln
