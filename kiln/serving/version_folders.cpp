#include "kiln/serving/version_folders.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/remove_tree.h"

namespace kiln::serving {
namespace fs = std::filesystem;
namespace {

// A whole number of at most 18 digits (an int64 without overflow), as a version's name.
bool is_version_name(const std::string& name) {
  return !name.empty() && name.size() <= 18 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<int64_t> list_versions(const std::string& base) {
  std::vector<int64_t> versions;
  std::error_code error;
  for (fs::directory_iterator it(base, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (is_version_name(name) && it->is_directory(error)) versions.push_back(std::stoll(name));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

int64_t next_version(const std::string& base) {
  std::vector<int64_t> versions = list_versions(base);
  return versions.empty() ? 1 : versions.back() + 1;
}

std::string staging_folder(const std::string& base) {
  static std::atomic<int> counter{0};
  fs::create_directories(base);
  std::string staging = fmt::format("{}/.writing-{}-{}", base, ::getpid(), counter++);
  remove_tree(staging);
  fs::create_directory(staging);
  return staging;
}

int64_t publish_version(const std::string& base, const std::string& staging) {
  int64_t version = next_version(base);
  std::string target = fmt::format("{}/{}", base, version);
  // rename(2) onto an existing non-empty folder fails: two writers never share a number.
  std::error_code error;
  fs::rename(staging, target, error);
  if (error)
    throw Error(fmt::format("cannot publish {} as version {} of {}: {}", staging, version, base,
                            error.message()));
  return version;
}

void keep_newest_versions(const std::string& base, int64_t keep) {
  std::vector<int64_t> versions = list_versions(base);
  for (size_t i = 0; i + keep < versions.size(); ++i)
    remove_tree(fmt::format("{}/{}", base, versions[i]));
}

}  // namespace kiln::serving
