#include "kiln/core/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"

namespace kiln {
namespace {

// What failed, for the message: the entry's path and the errno.
struct RemovalFailure {
  std::string path;
  int error_number = 0;
};

bool is_folder(int parent_fd, const char* name, unsigned char type) {
  if (type != DT_UNKNOWN) return type == DT_DIR;
  struct stat info {};
  return fstatat(parent_fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(info.st_mode);
}

bool empty_folder(int folder_fd, const std::string& path, RemovalFailure& failure);

// Removes `name` inside the open folder `parent_fd`; `path` is its full path, for messages.
bool remove_entry(int parent_fd, const char* name, unsigned char type, const std::string& path,
                  RemovalFailure& failure) {
  if (is_folder(parent_fd, name, type)) {
    int folder_fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder_fd < 0) {
      failure = {path, errno};
      return false;
    }
    if (!empty_folder(folder_fd, path, failure)) return false;
    if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) return true;
  } else if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) {
    return true;
  }
  failure = {path, errno};
  return false;
}

// Removes everything inside the folder open as `folder_fd`, and closes it.
bool empty_folder(int folder_fd, const std::string& path, RemovalFailure& failure) {
  DIR* folder = fdopendir(folder_fd);
  if (folder == nullptr) {
    failure = {path, errno};
    close(folder_fd);
    return false;
  }
  bool removed = true;
  errno = 0;
  while (dirent* entry = readdir(folder)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    removed = remove_entry(dirfd(folder), entry->d_name, entry->d_type, path + "/" + entry->d_name,
                           failure);
    if (!removed) break;
    errno = 0;
  }
  if (removed && errno != 0) {  // readdir failed rather than reaching the end
    failure = {path, errno};
    removed = false;
  }
  closedir(folder);
  return removed;
}

bool remove_tree_or_fail(const std::string& path, RemovalFailure& failure) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return true;
    failure = {path, errno};
    return false;
  }
  return remove_entry(AT_FDCWD, path.c_str(), S_ISDIR(info.st_mode) ? DT_DIR : DT_REG, path,
                      failure);
}

}  // namespace

void remove_tree(const std::string& path) {
  RemovalFailure failure;
  if (!remove_tree_or_fail(path, failure)) {
    throw IoError("remove", failure.path, failure.error_number);
  }
}

bool remove_tree(const std::string& path, std::error_code& error) noexcept {
  try {
    RemovalFailure failure;
    bool removed = remove_tree_or_fail(path, failure);
    error = removed ? std::error_code()
                    : std::error_code(failure.error_number, std::generic_category());
    return removed;
  } catch (const std::bad_alloc&) {  // building a path string
    error = std::make_error_code(std::errc::not_enough_memory);
    return false;
  }
}

}  // namespace kiln
