#include "kiln/core/cpu_features.h"

#include <string>

#include "kiln/core/text_file.h"

namespace kiln {
namespace {

// Its first 64 KiB hold the first processor's entry, all that is read: on a machine of hundreds
// of cores the file is hundreds of KiB, every entry alike.
constexpr size_t kMaxCpuinfoBytes = 64 * 1024;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

void add_words(std::string_view words, std::set<std::string>& into) {
  size_t at = 0;
  while (at < words.size()) {
    size_t end = words.find(' ', at);
    if (end == std::string_view::npos) end = words.size();
    if (end > at) into.emplace(words.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace

std::string CpuFeatures::vector_summary() const {
  std::string summary;
  if (has("avx512f"))
    summary = "AVX512";
  else if (has("avx2"))
    summary = "AVX2";
  else if (has("avx"))
    summary = "AVX";
  else if (has("asimd"))
    summary = "NEON";
  else
    summary = "no AVX";
  if (has("avx512_bf16")) summary += " with BF16";
  if (has("amx_bf16")) summary += (has("avx512_bf16") ? " and AMX" : " with AMX");
  return summary;
}

CpuFeatures parse_cpuinfo(std::string_view text) {
  CpuFeatures cpu;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (trimmed(line).empty()) {
      if (!cpu.flags.empty() || cpu.model != "unknown") break;  // the first processor's end
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trimmed(line.substr(0, colon)), value = trimmed(line.substr(colon + 1));
    if (key == "model name" && !value.empty())
      cpu.model = std::string(value);
    else if (key == "CPU part" && cpu.model == "unknown" && !value.empty())
      cpu.model = "ARM part " + std::string(value);
    else if (key == "flags" || key == "Features")
      add_words(value, cpu.flags);
  }
  return cpu;
}

const CpuFeatures& this_cpu() {
  static const CpuFeatures cpu = parse_cpuinfo(read_kernel_file("/proc/cpuinfo", kMaxCpuinfoBytes));
  return cpu;
}

}  // namespace kiln
