#include "kiln/experiment/resume.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "kiln/core/remove_tree.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/experiment/experiment_config.h"

namespace kiln::experiment {

namespace fs = std::filesystem;

namespace {

void collect_changes(const Json& before, const Json& after, const std::string& path,
                     std::vector<std::string>& out) {
  // A mapping that is absent on one side (a stage that did not set `train`) compares as empty,
  // so the keys inside it are named.
  bool objects = (before.is_object() || before.is_null()) && (after.is_object() || after.is_null());
  if (objects && !(before.is_null() && after.is_null())) {
    std::set<std::string> keys;
    for (const auto& item : before.items()) keys.insert(item.key());
    for (const auto& item : after.items()) keys.insert(item.key());
    for (const auto& key : keys) {
      std::string child = path.empty() ? key : path + "." + key;
      collect_changes(before.contains(key) ? before.at(key) : Json(),
                      after.contains(key) ? after.at(key) : Json(), child, out);
    }
    return;
  }
  // A stage's keys are named one by one (stages[1].train.max), as the top-level ones.
  bool stage_list = path == "stages" && before.is_array() && after.is_array();
  if (stage_list && before.size() == after.size()) {
    for (size_t i = 0; i < before.size(); ++i)
      collect_changes(before[i], after[i], index_path(path, i), out);
    return;
  }
  if (before != after) out.push_back(path);
}

// A resumable key, at the top level or in a stage (stages[1].train.max).
bool is_resumable(const std::string& key) {
  const auto& keys = resumable_keys();
  std::string own = key;
  if (key.rfind("stages[", 0) == 0 && key.find("].") != std::string::npos)
    own = key.substr(key.find("].") + 2);
  return std::find(keys.begin(), keys.end(), own) != keys.end();
}

}  // namespace

std::vector<std::string> changed_keys(const Json& before, const Json& after) {
  std::vector<std::string> out;
  collect_changes(before, after, "", out);
  return out;
}

RawConfig resume_config(const std::string& run_dir, const std::vector<std::string>& overrides) {
  return resumable_config(run_dir, load_config({run_dir + "/config.yaml"}, overrides), "--set");
}

namespace {

// Refuses `after` when it changes a key of `before` that a resumed run cannot change.
void refuse_unresumable(const RawConfig& before, const RawConfig& after, const std::string& source,
                        const std::string& run_dir) {
  Json old_config = resolved_config(parse_experiment(before));
  Json new_config = resolved_config(parse_experiment(after));
  for (const auto& key : changed_keys(old_config, new_config))
    if (!is_resumable(key)) {
      std::string allowed;
      for (const auto& k : resumable_keys()) allowed += (allowed.empty() ? "" : ", ") + k;
      throw UsageError(source + " changes " + key + ", which a resumed run cannot change (it " +
                       "shaped the steps already taken; the run keeps it in " + run_dir +
                       "/config.yaml); resumable keys: " + allowed +
                       " (in a stage too: stages[i].train.max)");
    }
}

// The config.yaml the run's newest valid checkpoint saved (what its steps were trained with), or
// none when it saved no checkpoint yet.
std::optional<std::string> trained_config_file(const std::string& run_dir) {
  std::vector<std::string> warnings;  // resuming reports them, when it looks for the checkpoint
  try {
    std::string file = engine::find_checkpoint(run_dir, "last", &warnings) + "/config.yaml";
    if (fs::exists(file)) return file;  // checkpoints from before config.yaml was saved lack it
  } catch (const Error&) {
    // No checkpoint: nothing was trained that an edit could contradict. None valid: resuming
    // refuses the run itself, saying what it left as it was.
  }
  return std::nullopt;
}

}  // namespace

RawConfig resumable_config(const std::string& run_dir, RawConfig changed,
                           const std::string& source) {
  std::string run_config = run_dir + "/config.yaml";
  RawConfig saved = load_config({run_config}, {});
  // A hand edit of the run's config.yaml is held to what --set may change: checked against the
  // config the checkpoint was trained with, which its MANIFEST vouches for.
  if (std::optional<std::string> trained = trained_config_file(run_dir))
    refuse_unresumable(
        load_config({*trained}, {}), saved,
        run_config + " (edited since " + fs::path(*trained).parent_path().string() + " was saved)",
        run_dir);
  refuse_unresumable(saved, changed, source, run_dir);
  return changed;
}

void remove_checkpoints_after(const std::string& checkpoints_dir, int64_t step) {
  if (!fs::is_directory(checkpoints_dir)) return;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir)) {
    std::string name = entry.path().filename().string();
    bool temporary = name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0;
    std::optional<int64_t> saved_step =
        name.rfind("step-", 0) == 0 ? digits_value(name.substr(5)) : std::nullopt;
    bool later = saved_step && *saved_step > step;
    if (temporary || later) remove_tree(entry.path().string());
  }
}

}  // namespace kiln::experiment
