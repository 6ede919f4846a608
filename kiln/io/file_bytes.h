#pragma once
// Whole-file binary reads, with transparent gzip decompression for formats that are commonly
// shipped gzipped (IDX). Thread-safety: pure functions.

#include <string>

namespace kiln::io {

/// The bytes of a file; throws IoError naming the path.
std::string read_file_bytes(const std::string& path);

/// True when `bytes` start with the gzip magic (1f 8b).
bool is_gzip(const std::string& bytes);

/// Inflates a gzip stream; throws DataError naming `name` and the compressed offset where it broke.
std::string gunzip(const std::string& compressed, const std::string& name);

}  // namespace kiln::io
