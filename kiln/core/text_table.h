#pragma once
// Tables for a terminal: rows of cells in columns padded to their widest cell, two spaces apart
// (`kiln runs`, `kiln tune show`).
// Thread-safety: a pure function.

#include <string>
#include <vector>

namespace kiln {

/// The rows as lines, each column padded to its widest cell, trailing spaces cut; control bytes
/// and bytes that are not UTF-8 shown as `\xNN` (terminal_text).
std::string aligned_columns(const std::vector<std::vector<std::string>>& rows);

}  // namespace kiln
