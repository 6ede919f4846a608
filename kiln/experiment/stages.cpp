#include "kiln/experiment/stages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::experiment {
namespace {

// Why a key that stage_keys() leaves out is the whole run's; matched by the longest prefix.
const std::vector<std::pair<std::string, std::string>>& fixed_key_reasons() {
  static const std::vector<std::pair<std::string, std::string>> reasons = {
      {"model",
       "the weights carry over from stage to stage, so every stage trains the same network "
       "(model.init_from loads weights before the first stage only)"},
      {"data", "every stage trains and validates on the same examples"},
      {"metrics", "every stage measures the same metrics, so the run's curves go on across stages"},
      {"train.monitor",
       "the run's best result is judged by one metric over all stages (a callback may monitor "
       "its own)"},
      {"train.mode", "the run's best result is judged one way over all stages"},
      {"stages", "stages do not nest"},
  };
  return reasons;
}

bool under(const std::string& path, const std::string& prefix) {
  return path == prefix || path.rfind(prefix + ".", 0) == 0;
}

std::string fixed_key_reason(const std::string& path) {
  for (const auto& [prefix, reason] : fixed_key_reasons())
    if (under(path, prefix)) return reason;
  return "it holds for the whole run";
}

// The dotted paths of the values an entry sets, down to the keys stage_keys() names.
void collect_paths(const Json& node, const std::string& path, std::vector<std::string>& out) {
  for (const auto& key : stage_keys())
    if (under(path, key)) return out.push_back(path);
  bool is_section = path == "train" || path == "data";
  if (!node.is_object() || !is_section) return out.push_back(path);
  for (const auto& [key, child] : node.items()) collect_paths(child, path + "." + key, out);
}

void check_stage_keys(const Json& entry, size_t index, const Origins& origins) {
  std::vector<std::string> paths;
  for (const auto& [key, value] : entry.items()) collect_paths(value, key, paths);
  for (const auto& path : paths) {
    bool allowed = false;
    for (const auto& key : stage_keys()) allowed = allowed || under(path, key);
    if (allowed) continue;
    std::string at = fmt::format("stages[{}].{}", index, path);
    throw ConfigError(at, origins.find(at),
                      fmt::format("a stage cannot change {}: {}; a stage may change {}", path,
                                  fixed_key_reason(path), fmt::join(stage_keys(), ", ")));
  }
}

// Whether `entry` gives the value at `path` (or a value holding it whole).
bool sets(const Json& entry, const std::string& path) {
  std::vector<PathStep> steps;
  try {
    steps = parse_config_path(path);
  } catch (const ConfigError&) {
    return false;  // a key with dots or brackets in it: left where it is
  }
  const Json* node = &entry;
  for (const auto& step : steps) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!node->is_object()) return true;
      if (!node->contains(*key)) return false;
      node = &node->at(*key);
    } else {
      return true;  // a list is replaced whole, so whoever gave it gave its items
    }
  }
  return true;
}

}  // namespace

const std::vector<std::string>& stage_keys() {
  static const std::vector<std::string> keys = {"optimizer",        "scheduler",
                                                "schedules",        "loss",
                                                "regularization",   "callbacks",
                                                "train.max",        "train.validate_every",
                                                "train.log_every",  "train.freeze",
                                                "train.lr_scales",  "train.val_steps",
                                                "train.accumulate", "train.clip_norm",
                                                "train.clip_value", "train.on_nan",
                                                "train.stop_at",    "train.precision",
                                                "data.batch_size",  "data.eval_batch_size",
                                                "data.shuffle",     "data.drop_last",
                                                "data.workers",     "data.prefetch",
                                                "data.transforms",  "train.weight_decay_scales"};
  return keys;
}

void merge_stage(Json& base, const Json& overlay) {
  bool overlay_has_type = overlay.is_object() && overlay.contains("type");
  if (base.is_string() && overlay.is_object() && !overlay_has_type)
    base = Json{{"type", base}};  // `optimizer: adam`, then `optimizer: {lr: 1e-4}`
  if (!base.is_object() || !overlay.is_object()) {
    base = overlay;
    return;
  }
  if (overlay_has_type && base.value("type", Json()) != overlay.at("type")) {
    base = overlay;  // another component: none of the old one's options apply
    return;
  }
  for (const auto& [key, value] : overlay.items()) merge_stage(base[key], value);
}

std::string Stage::title() const { return fmt::format("stage {}/{}: {}", index + 1, count, name); }

ConfigError Stage::locate(const ConfigError& error) const {
  if (!staged()) return error;
  std::string path = error.path(), origin = error.origin();
  for (size_t j = entries.size(); j-- > 0;)
    if (!path.empty() && sets(entries[j], path)) {
      path = fmt::format("stages[{}].{}", j, path);
      origin = origins.find(path);
      break;
    }
  return ConfigError(path, origin, error.problem() + " (in " + title() + ")");
}

std::vector<Stage> plan_stages(const RawConfig& raw, const ExperimentConfig& config) {
  const Json& entries = config.stages.entries;
  if (entries.empty()) return {Stage{0, 1, "", config, Json::array(), raw.origins}};
  std::vector<Stage> stages;
  Json tree = raw.tree;
  tree.erase("stages");
  Json given = Json::array();
  for (size_t i = 0; i < entries.size(); ++i) {
    Json entry = entries[i];
    std::string name = entry.at("name").get<std::string>();
    entry.erase("name");
    merge_stage(tree, entry);
    given.push_back(entry);
    Stage stage{i, entries.size(), name, {}, given, raw.origins};
    try {
      stage.config = parse_experiment(RawConfig{tree, raw.origins});
    } catch (const ConfigError& e) {
      throw stage.locate(e);
    }
    check_stage_keys(entry, i, raw.origins);
    stages.push_back(std::move(stage));
  }
  return stages;
}

}  // namespace kiln::experiment
