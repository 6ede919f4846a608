#pragma once
// Recursive removal of a file or folder, on POSIX calls rather than std::filesystem::remove_all.
// Why: a LibTorch from pip (built with an older GCC) exports its own copy of
// std::filesystem::remove_all, the dynamic loader may bind kiln's calls to that copy, and it
// crashes on a path of the newer libstdc++ (docs/gpu.md). Every folder kiln deletes (old
// checkpoints, staging folders, old export versions) goes through here.
// Thread-safety: safe to call concurrently on unrelated paths.

#include <string>
#include <system_error>

namespace kiln {

/// Removes `path` and, when it is a folder, everything under it. Symbolic links are removed, never
/// followed. A missing path is not an error. Throws IoError naming the entry that could not go.
void remove_tree(const std::string& path);

/// The same, reporting the first failure in `error` instead of throwing; returns !error.
bool remove_tree(const std::string& path, std::error_code& error) noexcept;

}  // namespace kiln
