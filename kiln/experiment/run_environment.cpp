#include "kiln/experiment/run_environment.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>

#include "kiln/core/cpu_features.h"
#include "kiln/core/usable_cpus.h"

namespace kiln::experiment {

using namespace engine;

namespace {

std::string first_line_of_command(const char* command) {
  std::string out;
  if (FILE* pipe = ::popen(command, "r")) {
    char line[256];
    if (std::fgets(line, sizeof(line), pipe)) out = line;
    ::pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::string libtorch_version() {
  return fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
}

Json environment_info() {
  char host[256] = "unknown";
  ::gethostname(host, sizeof(host) - 1);
  Json info = Json::object();
  info["host"] = host;
  info["kiln_version"] = KILN_VERSION;
  info["libtorch_version"] = libtorch_version();
  info["cpu"] = this_cpu().describe();
  info["cpus"] = usable_cpus().why;
  info["cuda_devices"] = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
  std::string commit = first_line_of_command("git rev-parse HEAD 2>/dev/null");
  info["git_commit"] = commit.empty() ? Json() : Json(commit);
  return info;
}

}  // namespace kiln::experiment
