#pragma once
// A checkpoint's MANIFEST (docs/design.md §6): one line per file of the checkpoint's folder, its
// CRC-32C (8 hex digits), its size in bytes and its name, so that a load can tell a whole
// checkpoint from a damaged or altered one. Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::io {

struct ManifestEntry {
  uint32_t crc = 0;
  uint64_t size = 0;
  std::string file;  // a name in the checkpoint's own folder
};

/// The line that lists `name` with content `bytes`, newline included.
std::string manifest_line(const std::string& name, const std::string& bytes);

/// Reads MANIFEST text. Throws DataError naming `path` and the line (counted from 0) for a
/// malformed line, a name that is not a plain file name ("../x", "a/b"), or a name listed twice.
std::vector<ManifestEntry> parse_manifest(const std::string& text, const std::string& path);

}  // namespace kiln::io
