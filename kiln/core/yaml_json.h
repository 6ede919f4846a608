#pragma once
// Conversion between yaml-cpp nodes and the JSON tree. Plain YAML scalars are typed by the YAML 1.2
// core schema (null, bool, int, float, else string); quoted scalars stay strings.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

#include "kiln/core/json.h"

namespace kiln {

/// Bounds on what a YAML document may expand to: aliases let 300 bytes describe a billion values
/// or a cycle.
struct YamlLimits {
  size_t max_values = 100000;
  size_t max_depth = 64;
};

/// Refuses, before any node of it is built, a YAML text of more than 2 * max_values scalars and
/// collections (keys included): yaml-cpp takes about 700 bytes a node, so a 16 MiB flow list of
/// 8.4 million one-letter labels took 5.5 GB and 28 s to be built and refused. ConfigError
/// naming `origin`, the line and the column; YAML errors are left for the parse to report.
void check_yaml_size(const std::string& text, const std::string& origin,
                     const YamlLimits& limits = {});
/// The document as JSON; ConfigError (naming `origin` and the key path) for a recursive alias, a
/// duplicate key or a document beyond `limits`.
Json yaml_to_json(const YAML::Node& node, const std::string& origin, const YamlLimits& limits = {});
/// Writes `value` as block-style YAML that yaml_to_json reads back unchanged.
void emit_yaml(YAML::Emitter& out, const Json& value);

}  // namespace kiln
