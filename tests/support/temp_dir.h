#pragma once
// A fresh directory under the system temp folder, removed with everything in it on destruction.

#include <string>

namespace kiln::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// `path()/name`.
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  /// Writes `content` to `path()/name` and returns the full path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace kiln::testing
