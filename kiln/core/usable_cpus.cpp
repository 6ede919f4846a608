#include "kiln/core/usable_cpus.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "kiln/core/text_file.h"

namespace kiln {
namespace {

constexpr size_t kMaxControlFileBytes = 4096;  // cgroup files are a line; /proc/self/cgroup short
constexpr int kMaxCgroupDepth = 64;            // folders walked up from the process's cgroup

// A control file's line, without its newline.
std::string read_small(const std::string& path) {
  std::string text = read_kernel_file(path, kMaxControlFileBytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<long long> whole_number(std::string_view text) {
  long long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> smaller(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The cgroup of this process for `controller` ("" for v2's unified line), from /proc/self/cgroup.
std::optional<std::string> cgroup_path(std::string_view controller) {
  std::string text = read_small("/proc/self/cgroup");
  size_t at = 0;
  while (at < text.size()) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    bool match =
        controller.empty()
            ? controllers.empty()
            : ("," + std::string(controllers) + ",").find("," + std::string(controller) + ",") !=
                  std::string::npos;
    if (match) return std::string(line.substr(second + 1));
  }
  return std::nullopt;
}

// The smallest quota from the cgroup `path` up to the root of `mount` (a limit may be set on a
// parent), and at the mount's root itself, where a container sees its own cgroup.
template <class Read>
std::optional<double> quota_along(const std::string& mount, std::string path, const Read& read) {
  std::optional<double> quota = read(mount);
  for (int depth = 0; depth < kMaxCgroupDepth && !path.empty() && path != "/"; ++depth) {
    quota = smaller(quota, read(mount + path));
    path = path.substr(0, path.rfind('/'));
  }
  return quota;
}

std::optional<double> cgroup_quota() {
  if (std::optional<std::string> unified = cgroup_path(""))
    if (auto quota = quota_along("/sys/fs/cgroup", *unified, [](const std::string& folder) {
          return parse_cpu_max(read_small(folder + "/cpu.max"));
        }))
      return quota;
  std::optional<std::string> v1 = cgroup_path("cpu");
  if (!v1) return std::nullopt;
  for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
    auto quota = quota_along(mount, *v1, [](const std::string& folder) {
      return parse_cfs_quota(read_small(folder + "/cpu.cfs_quota_us"),
                             read_small(folder + "/cpu.cfs_period_us"));
    });
    if (quota) return quota;
  }
  return std::nullopt;
}

int affinity_count(int online) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return online;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace

UsableCpus usable_cpus_from(int online, int affinity, std::optional<double> quota) {
  online = std::max(1, online);
  affinity = std::clamp(affinity, 1, online);
  UsableCpus cpus;
  cpus.count = affinity;
  // Clamped as a double: a quota of 2^63 CPUs (a hand-edited cpu.max) does not fit an int.
  if (quota && *quota > 0) cpus.count = int(std::clamp(std::ceil(*quota), 1.0, double(affinity)));
  std::string limit =
      quota && *quota > 0 ? fmt::format("a cgroup quota of {:g}", *quota) : "no cgroup quota";
  cpus.why = fmt::format("{} CPU{}: {} online, {} in this process's affinity, {}", cpus.count,
                         cpus.count == 1 ? "" : "s", online, affinity, limit);
  return cpus;
}

std::optional<double> parse_cpu_max(std::string_view text) {
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::optional<long long> quota = whole_number(text.substr(0, space));
  std::optional<long long> period = whole_number(text.substr(space + 1));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;  // "max": none
  return double(*quota) / double(*period);
}

std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period) {
  std::optional<long long> q = whole_number(quota), p = whole_number(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;  // -1: none
  return double(*q) / double(*p);
}

const UsableCpus& usable_cpus() {
  static const UsableCpus cpus = [] {
    int online = int(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    return usable_cpus_from(online, affinity_count(online), cgroup_quota());
  }();
  return cpus;
}

}  // namespace kiln
