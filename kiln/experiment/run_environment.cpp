#include "kiln/experiment/run_environment.h"

#include <ATen/Version.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>

#include "kiln/core/cpu_features.h"
#include "kiln/core/usable_cpus.h"

namespace kiln::experiment {

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

// The text after `label` on the line of at::show_config() that holds it, to the line's end.
std::string config_line_value(const std::string& config, const std::string& label) {
  size_t at = config.find(label);
  if (at == std::string::npos) return "";
  at += label.size();
  return config.substr(at, config.find('\n', at) - at);
}

// oneDNN's own answer to which instructions its kernels use, looked up when asked rather than
// linked: Debian's LibTorch loads the system's libdnnl, whose functions dlsym finds, while
// PyTorch's own builds carry oneDNN inside with its symbols hidden, and then the ISA is not
// known (and nothing else breaks).
std::string onednn_isa_text() {
  using GetIsa = int (*)();
  using IsaName = const char* (*)(int);
  auto get_isa = reinterpret_cast<GetIsa>(::dlsym(RTLD_DEFAULT, "dnnl_get_effective_cpu_isa"));
  auto isa_name = reinterpret_cast<IsaName>(::dlsym(RTLD_DEFAULT, "dnnl_cpu_isa2str"));
  const char* name = get_isa && isa_name ? isa_name(get_isa()) : nullptr;
  if (!name) return "";
  std::string isa = name;  // "cpu_isa_avx2": the prefix says nothing
  return isa.rfind("cpu_isa_", 0) == 0 ? isa.substr(8) : isa;
}

}  // namespace

std::string onednn_kernels_isa() {
  static const std::string isa = onednn_isa_text();  // fixed for the process once oneDNN runs
  return isa;
}

Json cpu_kernels() {
  std::string config = at::show_config();
  std::string aten = config_line_value(config, "CPU capability usage: ");
  Json kernels = {{"aten", aten.empty() ? Json() : Json(aten)}};
  std::string onednn = config_line_value(config, "MKL-DNN v");
  if (onednn.empty()) onednn = config_line_value(config, "oneDNN v");
  onednn = onednn.substr(0, onednn.find(' '));
  kernels["onednn"] = onednn.empty() ? Json() : Json(onednn);
  std::string isa = onednn_kernels_isa();
  kernels["onednn_isa"] = isa.empty() ? Json() : Json(isa);
  return kernels;
}

std::string cpu_kernels_text() {
  Json kernels = cpu_kernels();
  auto text = [](const Json& value) {
    return value.is_string() && !value.get<std::string>().empty() ? value.get<std::string>()
                                                                  : std::string("unknown");
  };
  return fmt::format("ATen {}, oneDNN {} ({})", text(kernels["aten"]), text(kernels["onednn"]),
                     text(kernels["onednn_isa"]));
}

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
  info["cpu_kernels"] = cpu_kernels();
  info["cuda_devices"] = torch::cuda::is_available() ? torch::cuda::device_count() : 0;
  std::string commit = first_line_of_command("git rev-parse HEAD 2>/dev/null");
  info["git_commit"] = commit.empty() ? Json() : Json(commit);
  return info;
}

}  // namespace kiln::experiment
