#include "kiln/core/yaml_json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>

namespace kiln {
namespace {

bool is_one_of(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* word : words)
    if (text == word) return true;
  return false;
}

// YAML 1.2 core schema; decimal, 0x and 0o integers.
bool parse_integer(const std::string& text, Json& out) {
  static const std::regex decimal("[-+]?[0-9]+");
  static const std::regex hex("0x[0-9a-fA-F]+");
  static const std::regex octal("0o[0-7]+");
  int base = 0;
  std::string digits = text;
  if (std::regex_match(text, decimal)) {
    base = 10;
  } else if (std::regex_match(text, hex)) {
    base = 16, digits = text.substr(2);
  } else if (std::regex_match(text, octal)) {
    base = 8, digits = text.substr(2);
  } else {
    return false;
  }
  errno = 0;
  long long value = std::strtoll(digits.c_str(), nullptr, base);
  if (errno == ERANGE) return false;  // too large: kept as a string, reported by the schema
  out = static_cast<int64_t>(value);
  return true;
}

bool parse_float(const std::string& text, Json& out) {
  static const std::regex number("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(text, number)) {
    out = std::strtod(text.c_str(), nullptr);
    return true;
  }
  if (is_one_of(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})) {
    out = std::numeric_limits<double>::infinity();
  } else if (is_one_of(text, {"-.inf", "-.Inf", "-.INF"})) {
    out = -std::numeric_limits<double>::infinity();
  } else if (is_one_of(text, {".nan", ".NaN", ".NAN"})) {
    out = std::numeric_limits<double>::quiet_NaN();
  } else {
    return false;
  }
  return true;
}

Json plain_scalar(const std::string& text) {
  if (is_one_of(text, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(text, {"true", "True", "TRUE"})) return true;
  if (is_one_of(text, {"false", "False", "FALSE"})) return false;
  Json number;
  if (parse_integer(text, number) || parse_float(text, number)) return number;
  return text;
}

}  // namespace

Json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags plain scalars "?" and quoted ones "!".
      return node.Tag() == "!" ? Json(node.Scalar()) : plain_scalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      Json list = Json::array();
      for (const auto& item : node) list.push_back(yaml_to_json(item));
      return list;
    }
    case YAML::NodeType::Map: {
      Json object = Json::object();
      for (const auto& entry : node)
        object[entry.first.as<std::string>()] = yaml_to_json(entry.second);
      return object;
    }
  }
  return nullptr;
}

void emit_yaml(YAML::Emitter& out, const Json& value) {
  if (value.is_object()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginMap;
    for (const auto& [key, child] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emit_yaml(out, child);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const auto& child : value) emit_yaml(out, child);
    out << YAML::EndSeq;
  } else if (value.is_null()) {
    out << YAML::Null;
  } else if (value.is_string()) {
    // A string that would read back as another type ("1", "true") must be quoted. (A node tagged
    // "!" is not enough: yaml-cpp's emitter drops that tag and writes the scalar plain.)
    const auto& text = value.get_ref<const std::string&>();
    if (!plain_scalar(text).is_string()) out << YAML::DoubleQuoted;
    out << text;
  } else if (value.is_number_float() && std::isinf(value.get<double>())) {
    out << (value.get<double>() > 0 ? ".inf" : "-.inf");
  } else if (value.is_number_float() && std::isnan(value.get<double>())) {
    out << ".nan";
  } else {
    out << value.dump();
  }
}

}  // namespace kiln
