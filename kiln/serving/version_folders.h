#pragma once
// A served model's base path holds one folder per version, named by its number (1, 2, ...), as
// TensorFlow Serving lays them out. A new version is written under a hidden temporary name in the
// same base path and renamed into place, so a server polling the folder never sees half of one.
// Thread-safety: functions of the file system; one writer per base path.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::serving {

/// The versions under `base`: its subfolders whose names are whole numbers, in increasing order;
/// none when `base` does not exist.
std::vector<int64_t> list_versions(const std::string& base);

/// The number the next version gets: one more than the largest, 1 in an empty base path.
int64_t next_version(const std::string& base);

/// A fresh hidden folder in `base` (created with it) to write a version into.
std::string staging_folder(const std::string& base);

/// Renames the written `staging` folder to `base/VERSION`, VERSION the next number; returns the
/// version. Throws Error when the rename fails (another writer took the number).
int64_t publish_version(const std::string& base, const std::string& staging);

/// Removes all but the newest `keep` versions (keep >= 1).
void keep_newest_versions(const std::string& base, int64_t keep);

}  // namespace kiln::serving
