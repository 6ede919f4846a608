#pragma once
// Whole-file binary reads, with transparent gzip decompression for formats that are commonly
// shipped gzipped (IDX). Thread-safety: pure functions.

#include <cstddef>
#include <string>

namespace kiln::io {

/// The most a binary file kiln reads whole may hold (4 GiB): weights, IDX, CSV, images.
constexpr size_t kMaxWholeFileBytes = size_t{4} << 30;

/// The bytes of a regular file of at most `max_bytes` (kiln::read_whole_file); throws IoError or
/// DataError naming the path.
std::string read_file_bytes(const std::string& path, size_t max_bytes = kMaxWholeFileBytes);

/// True when `bytes` start with the gzip magic (1f 8b).
bool is_gzip(const std::string& bytes);

/// The most a whole-file read inflates to (2 GiB): a small gzip of zeros must end in an error,
/// not in the kernel's out-of-memory kill.
constexpr size_t kMaxInflatedBytes = size_t{2} << 30;

/// Inflates a gzip stream; throws DataError naming `name` and the compressed offset where it
/// broke, or when it inflates to more than `limit` bytes.
std::string gunzip(const std::string& compressed, const std::string& name,
                   size_t limit = kMaxInflatedBytes);

}  // namespace kiln::io
