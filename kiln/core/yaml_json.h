#pragma once
// Conversion between yaml-cpp nodes and the JSON tree. Plain YAML scalars are typed by the YAML 1.2
// core schema (null, bool, int, float, else string); quoted scalars stay strings.

#include <yaml-cpp/yaml.h>

#include "kiln/core/json.h"

namespace kiln {

Json yaml_to_json(const YAML::Node& node);
/// Writes `value` as block-style YAML that yaml_to_json reads back unchanged.
void emit_yaml(YAML::Emitter& out, const Json& value);

}  // namespace kiln
