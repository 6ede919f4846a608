#include "kiln/io/manifest.h"

#include <fmt/format.h>

#include <set>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"

namespace kiln::io {
namespace {

bool all_of(const std::string& text, const char* alphabet) {
  return !text.empty() && text.find_first_not_of(alphabet) == std::string::npos;
}

// "crc size name", exactly as manifest_line writes it: anything else is damage.
ManifestEntry parse_line(const std::string& line, const std::string& path, int64_t number) {
  size_t first = line.find(' '), second = line.find(' ', first + 1);
  auto fail = [&](const std::string& problem) {
    return DataError(path, number, -1, problem + ": \"" + line + "\"");
  };
  if (first == std::string::npos || second == std::string::npos)
    throw fail("malformed MANIFEST line (expected CRC, size and name)");
  std::string crc = line.substr(0, first), size = line.substr(first + 1, second - first - 1);
  ManifestEntry entry;
  entry.file = line.substr(second + 1);
  if (crc.size() != 8 || !all_of(crc, "0123456789abcdef"))
    throw fail("malformed MANIFEST line (the CRC is 8 hex digits)");
  if (size.size() > 19 || !all_of(size, "0123456789") || (size.size() > 1 && size[0] == '0'))
    throw fail("malformed MANIFEST line (the size is a whole number of bytes)");
  // A checkpoint's files sit in its own folder: a damaged MANIFEST must not send kiln reading
  // elsewhere ("../../big.bin").
  if (entry.file.empty() || entry.file.find('/') != std::string::npos || entry.file == "." ||
      entry.file == ".." || entry.file.find('\0') != std::string::npos)
    throw fail("the MANIFEST lists a name that is not a file of the checkpoint's folder");
  entry.crc = static_cast<uint32_t>(std::stoul(crc, nullptr, 16));
  entry.size = std::stoull(size);
  return entry;
}

}  // namespace

std::string manifest_line(const std::string& name, const std::string& bytes) {
  return fmt::format("{:08x} {} {}\n", crc32c(bytes.data(), bytes.size()), bytes.size(), name);
}

std::vector<ManifestEntry> parse_manifest(const std::string& text, const std::string& path) {
  std::vector<ManifestEntry> entries;
  std::set<std::string> names;
  size_t start = 0;
  for (int64_t number = 0; start < text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      throw DataError(path, number, -1, "the MANIFEST's last line is cut short");
    entries.push_back(parse_line(text.substr(start, end - start), path, number));
    if (!names.insert(entries.back().file).second)
      throw DataError(path, number, -1, "the MANIFEST lists \"" + entries.back().file + "\" twice");
    start = end + 1;
  }
  return entries;
}

}  // namespace kiln::io
