#include "kiln/tensorboard/hparams.h"

#include "kiln/tensorboard/proto/event.pb.h"
#include "kiln/tensorboard/proto/hparams.pb.h"
#include "kiln/tensorboard/summaries.h"

namespace kiln::tensorboard {
namespace {

constexpr const char* kPlugin = "hparams";

std::string serialized(const proto::HParamsPluginData& data) { return data.SerializeAsString(); }

google::protobuf::Value value_of(const Json& json) {
  google::protobuf::Value value;
  if (json.is_boolean())
    value.set_bool_value(json.get<bool>());
  else if (json.is_number())
    value.set_number_value(json.get<double>());
  else if (json.is_string())
    value.set_string_value(json.get<std::string>());
  else
    value.set_string_value(json.dump());
  return value;
}

proto::HParamDataType type_of(const Json& json) {
  if (json.is_boolean()) return proto::DATA_TYPE_BOOL;
  if (json.is_number()) return proto::DATA_TYPE_FLOAT64;
  return proto::DATA_TYPE_STRING;
}

void flatten(const Json& node, const std::string& path, std::map<std::string, Json>& out) {
  if (node.is_object()) {
    for (const auto& [key, child] : node.items())
      flatten(child, path.empty() ? key : path + "." + key, out);
  } else if (node.is_array()) {
    out[path] = node.dump();
  } else if (!node.is_null()) {
    out[path] = node;
  }
}

}  // namespace

proto::Event hparams_experiment_event(const std::map<std::string, Json>& hparams,
                                      const std::vector<HParamsMetric>& metrics,
                                      const std::string& name, double wall_time) {
  proto::HParamsPluginData data;
  proto::Experiment& experiment = *data.mutable_experiment();
  experiment.set_name(name);
  experiment.set_time_created_secs(wall_time);
  for (const auto& [key, value] : hparams) {
    proto::HParamInfo& info = *experiment.add_hparam_infos();
    info.set_name(key);
    info.set_type(type_of(value));
  }
  for (const HParamsMetric& metric : metrics) {
    proto::MetricInfo& info = *experiment.add_metric_infos();
    info.mutable_name()->set_group(metric.group);
    info.mutable_name()->set_tag(metric.tag);
  }
  return plugin_event("_hparams_/experiment", wall_time, kPlugin, serialized(data));
}

proto::Event hparams_session_start_event(const std::map<std::string, Json>& hparams,
                                         const std::string& group, double wall_time) {
  proto::HParamsPluginData data;
  proto::SessionStartInfo& start = *data.mutable_session_start_info();
  for (const auto& [key, value] : hparams) (*start.mutable_hparams())[key] = value_of(value);
  start.set_group_name(group);
  start.set_start_time_secs(wall_time);
  return plugin_event("_hparams_/session_start_info", wall_time, kPlugin, serialized(data));
}

proto::Event hparams_session_end_event(SessionStatus status, double wall_time) {
  proto::HParamsPluginData data;
  proto::SessionEndInfo& end = *data.mutable_session_end_info();
  end.set_status(static_cast<proto::HParamsStatus>(status));
  end.set_end_time_secs(wall_time);
  return plugin_event("_hparams_/session_end_info", wall_time, kPlugin, serialized(data));
}

std::map<std::string, Json> flatten_hparams(const Json& config) {
  std::map<std::string, Json> out;
  flatten(config, "", out);
  return out;
}

}  // namespace kiln::tensorboard
