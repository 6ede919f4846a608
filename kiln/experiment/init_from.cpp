#include "kiln/experiment/init_from.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "kiln/engine/checkpoint.h"

namespace kiln::experiment {

namespace {

namespace fs = std::filesystem;
constexpr const char* kPath = "model.init_from";

// The .safetensors file `path` names: itself, a checkpoint's model.safetensors (manifest
// verified), or a run's best (else last) checkpoint's.
std::string weights_file(const std::string& path) {
  if (fs::is_regular_file(path)) return path;
  std::string checkpoint = path;
  if (fs::is_directory(path) && !fs::exists(path + "/model.safetensors")) {
    if (!fs::is_directory(path + "/checkpoints"))
      throw ConfigError(std::string(kPath) + ".path", "",
                        fmt::format("\"{}\" is neither a .safetensors file, a checkpoint nor a run "
                                    "directory",
                                    path));
    checkpoint = engine::find_checkpoint(path, "best");
  } else if (!fs::is_directory(path)) {
    throw ConfigError(std::string(kPath) + ".path", "", fmt::format("\"{}\" does not exist", path));
  }
  engine::verify_checkpoint(checkpoint);
  return checkpoint + "/model.safetensors";
}

// Where source tensor `name` goes: renamed by the longest mapped prefix it starts with; without
// a map, the same name. Empty when a map is given and no prefix matches.
std::string target_name(const std::string& name, const std::map<std::string, std::string>& map) {
  if (map.empty()) return name;
  const std::pair<const std::string, std::string>* best = nullptr;
  for (const auto& entry : map)
    if (name.compare(0, entry.first.size(), entry.first) == 0 &&
        (!best || entry.first.size() > best->first.size()))
      best = &entry;
  return best ? best->second + name.substr(best->first.size()) : "";
}

bool under_mapped_prefix(const std::string& name, const std::map<std::string, std::string>& map) {
  if (map.empty()) return true;
  for (const auto& entry : map)
    if (name.compare(0, entry.second.size(), entry.second) == 0) return true;
  return false;
}

std::string listed(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  return names.size() > kShown ? fmt::format("{} and {} more", text, names.size() - kShown) : text;
}

}  // namespace

InitReport load_initial_weights(const InitFrom& init, torch::nn::Module& model) {
  InitReport report;
  report.source = weights_file(init.path);
  io::SafeTensorsFile file = io::read_safetensors(report.source);
  std::map<std::string, torch::Tensor> state = engine::named_state(model);
  torch::NoGradGuard no_grad;
  for (const auto& tensor : file.tensors) {
    std::string target = target_name(tensor.name, init.map);
    if (target.empty()) continue;
    auto slot = state.find(target);
    if (slot == state.end()) {
      report.unexpected.push_back(tensor.name);
      continue;
    }
    torch::Tensor source = engine::tensor_view(tensor, report.source);
    if (source.sizes() != slot->second.sizes())
      throw ConfigError(kPath, "",
                        fmt::format("{}: \"{}\" has shape [{}] but the model's \"{}\" is [{}]",
                                    report.source, tensor.name, fmt::join(source.sizes(), ", "),
                                    target, fmt::join(slot->second.sizes(), ", ")));
    slot->second.copy_(source);
    state.erase(slot);
    ++report.loaded;
  }
  for (const auto& [name, tensor] : state)
    if (under_mapped_prefix(name, init.map)) report.missing.push_back(name);
  if (init.strict && (!report.missing.empty() || !report.unexpected.empty()))
    throw ConfigError(
        kPath, "",
        fmt::format(
            "{} does not fit the model{}{}; set strict: false to load what "
            "matches",
            report.source,
            report.missing.empty() ? ""
                                   : "; the model's " + listed(report.missing) + " get no value",
            report.unexpected.empty() ? "" : "; " + listed(report.unexpected) + " have no place"));
  if (report.loaded == 0)
    throw ConfigError(kPath, "", fmt::format("nothing in {} matches the model", report.source));
  return report;
}

std::string init_report_text(const InitReport& report) {
  std::string text = fmt::format("init_from: {} tensors from {}", report.loaded, report.source);
  if (!report.missing.empty()) text += "; missing (kept as initialised): " + listed(report.missing);
  if (!report.unexpected.empty()) text += "; unexpected (ignored): " + listed(report.unexpected);
  return text;
}

}  // namespace kiln::experiment
