#pragma once
// Whole-file text reads and atomic writes (write a temporary, fsync, rename), so a crash never
// leaves a half-written run file behind.

#include <string>

namespace kiln {

/// Reads a file; throws IoError naming the path.
std::string read_text_file(const std::string& path);
/// Replaces `path` with `content` atomically; throws IoError.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace kiln
