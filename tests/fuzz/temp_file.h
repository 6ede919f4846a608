#pragma once
// A per-process scratch file for fuzz targets whose parser reads a path, not bytes. Named with
// the process id so that libFuzzer's -fork and -jobs workers never share one; removed at exit.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kiln::fuzz {

/// Writes `bytes` to this process's scratch file (under $TMPDIR, else /tmp) and returns its path.
inline const std::string& write_temp_file(const std::string& bytes) {
  struct Scratch {
    std::string path;
    ~Scratch() { std::remove(path.c_str()); }
  };
  static const Scratch scratch{[] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/kiln_fuzz_" + std::to_string(getpid());
  }()};
  std::ofstream(scratch.path, std::ios::binary | std::ios::trunc) << bytes;
  return scratch.path;
}

}  // namespace kiln::fuzz
