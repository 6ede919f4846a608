#include "kiln/serving/model_config.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/serving/proto/model_server_config.pb.h"

namespace kiln::serving {
namespace {

namespace pb = kiln::serving::proto;

// The first syntax error of a text-format file, with its line and column (1-based).
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (text.empty()) text = fmt::format("line {}, column {}: {}", line + 1, column + 1, message);
  }
  std::string text;
};

pb::ModelServerConfig parse_text_format(const std::string& text, const std::string& origin) {
  pb::ModelServerConfig config;
  FirstError error;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&error);
  if (!parser.ParseFromString(text, &config))
    throw ConfigError("", origin, error.text.empty() ? "not a model server config" : error.text);
  return config;
}

pb::ModelServerConfig parse_yaml(const std::string& text, const std::string& origin, bool is_json) {
  Json tree = parse_config_text(text, origin, is_json);
  pb::ModelServerConfig config;
  auto status = google::protobuf::util::JsonStringToMessage(tree.dump(), &config);
  if (!status.ok()) throw ConfigError("", origin, std::string(status.message()));
  return config;
}

VersionPolicy policy_of(const pb::ServableVersionPolicy& policy, const std::string& path,
                        const std::string& origin) {
  VersionPolicy out;
  switch (policy.policy_choice_case()) {
    case pb::ServableVersionPolicy::kAll:
      out.kind = VersionPolicy::Kind::kAll;
      break;
    case pb::ServableVersionPolicy::kSpecific:
      out.kind = VersionPolicy::Kind::kSpecific;
      out.versions.assign(policy.specific().versions().begin(), policy.specific().versions().end());
      std::sort(out.versions.begin(), out.versions.end());
      if (out.versions.empty())
        throw ConfigError(path + ".specific", origin, "names no version; give versions: N");
      break;
    case pb::ServableVersionPolicy::kLatest:
      out.latest = std::max<int64_t>(1, policy.latest().num_versions());
      break;
    case pb::ServableVersionPolicy::POLICY_CHOICE_NOT_SET:
      break;
  }
  return out;
}

ServedModel model_of(const pb::ModelConfig& config, const std::string& path,
                     const std::string& origin, const std::string& folder) {
  ServedModel model;
  model.name = config.name();
  if (model.name.empty())
    throw ConfigError(path + ".name", origin, "missing: every model needs a name");
  if (config.base_path().empty())
    throw ConfigError(
        path + ".base_path", origin,
        fmt::format("missing: model \"{}\" needs the folder of its versions", model.name));
  std::filesystem::path base(config.base_path());
  model.base_path =
      base.is_absolute() ? base.string() : (std::filesystem::path(folder) / base).string();
  model.platform = config.model_platform();
  model.policy = policy_of(config.model_version_policy(), path + ".model_version_policy", origin);
  for (const auto& [label, version] : config.version_labels()) {
    const auto& served = model.policy.versions;
    if (model.policy.kind == VersionPolicy::Kind::kSpecific &&
        !std::binary_search(served.begin(), served.end(), version))
      throw ConfigError(path + ".version_labels", origin,
                        fmt::format("label \"{}\" names version {}, which the version policy does "
                                    "not serve ({})",
                                    label, version, fmt::join(served, ", ")));
    model.labels[label] = version;
  }
  return model;
}

}  // namespace

std::vector<ServedModel> parse_model_config(const std::string& text, const std::string& origin,
                                            bool yaml, const std::string& folder) {
  bool is_json = origin.size() >= 5 && origin.compare(origin.size() - 5, 5, ".json") == 0;
  pb::ModelServerConfig config =
      yaml ? parse_yaml(text, origin, is_json) : parse_text_format(text, origin);
  const auto& list = config.model_config_list().config();
  if (list.empty())
    throw ConfigError("model_config_list", origin,
                      "no models; give model_config_list { config { name: \"NAME\" base_path: "
                      "\"DIR\" } }");
  std::vector<ServedModel> models;
  std::set<std::string> names;
  for (int i = 0; i < list.size(); ++i) {
    std::string path = fmt::format("model_config_list.config[{}]", i);
    models.push_back(model_of(list[i], path, origin, folder));
    if (!names.insert(models.back().name).second)
      throw ConfigError(path + ".name", origin,
                        fmt::format("model \"{}\" is configured twice", models.back().name));
  }
  return models;
}

std::vector<ServedModel> read_model_config(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  bool yaml = extension == ".yaml" || extension == ".yml" || extension == ".json";
  std::string folder = std::filesystem::path(path).parent_path().string();
  return parse_model_config(read_text_file(path), path, yaml, folder.empty() ? "." : folder);
}

std::vector<int64_t> versions_to_serve(const VersionPolicy& policy, std::vector<int64_t> on_disk) {
  std::sort(on_disk.begin(), on_disk.end());
  on_disk.erase(std::unique(on_disk.begin(), on_disk.end()), on_disk.end());
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      return on_disk;
    case VersionPolicy::Kind::kSpecific: {
      std::vector<int64_t> chosen;
      for (int64_t version : on_disk)
        if (std::binary_search(policy.versions.begin(), policy.versions.end(), version))
          chosen.push_back(version);
      return chosen;
    }
    case VersionPolicy::Kind::kLatest:
      break;
  }
  auto keep = std::min<size_t>(on_disk.size(), size_t(policy.latest));
  return {on_disk.end() - std::ptrdiff_t(keep), on_disk.end()};
}

}  // namespace kiln::serving
