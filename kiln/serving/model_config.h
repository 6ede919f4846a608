#pragma once
// What `kiln serve` serves, from `--model-config FILE`: TensorFlow Serving's model server config
// in its protobuf text format (model_config_list { config { name: ... base_path: ...
// model_version_policy { ... } version_labels { ... } } }), or the same tree in YAML or JSON
// (files ending .yaml, .yml or .json). Each model's versions are the numbered folders under its
// base path; its version policy chooses which of them are served.
// Thread-safety: pure functions and values.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::serving {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t latest = 1;             // kLatest: how many of the newest
  std::vector<int64_t> versions;  // kSpecific: these, sorted
};

struct ServedModel {
  std::string name;
  std::string base_path;  // a relative one is taken from the config file's folder
  std::string platform;   // model_platform, as written ("" when absent)
  VersionPolicy policy;
  std::map<std::string, int64_t> labels;  // version_labels
};

/// Reads a model config file. Throws ConfigError naming the file, and the line and column of a
/// syntax error or the model a problem is in (no models, a name twice, a missing base path, a
/// label on a version the policy does not serve).
std::vector<ServedModel> read_model_config(const std::string& path);
/// The same from text; `origin` names it in errors, `yaml` chooses the YAML/JSON form, relative
/// base paths are taken from `folder`.
std::vector<ServedModel> parse_model_config(const std::string& text, const std::string& origin,
                                            bool yaml, const std::string& folder);

/// Of the versions found on disk, those `policy` serves, in increasing order.
std::vector<int64_t> versions_to_serve(const VersionPolicy& policy, std::vector<int64_t> on_disk);

}  // namespace kiln::serving
