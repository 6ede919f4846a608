#include "kiln/core/schema.h"

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/core/suggest.h"

namespace kiln {

std::string choice_problem(const std::vector<std::string>& choices, const Json& value) {
  std::string known;
  for (const auto& choice : choices) known += (known.empty() ? "\"" : ", \"") + choice + "\"";
  return fmt::format("expected one of {}, got {}", known, show_value(value));
}

void ReadContext::fail(const std::string& problem) const {
  throw ConfigError(path, origins ? origins->find(path) : "", problem);
}

void read_fields(const Schema& schema, const Json& node, const ReadContext& ctx) {
  if (!node.is_null() && !node.is_object())
    ctx.fail("expected a mapping of keys to values, got " + show_value(node));
  std::vector<std::string> known;
  for (const auto& field : schema.fields()) known.push_back(field->key());
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      bool declared = false;
      for (const auto& name : known) declared = declared || name == key;
      if (!declared)
        ctx.child(key).fail("unknown key \"" + key + "\"; " + suggestion_text(key, known));
    }
  }
  for (const auto& field : schema.fields()) {
    ReadContext field_ctx = ctx.child(field->key());
    bool present = node.is_object() && node.contains(field->key());
    if (!present && field->required())
      field_ctx.fail("missing required key \"" + field->key() + "\"");
    field->read(present ? node.at(field->key()) : field->write(), field_ctx);
  }
}

Json write_fields(const Schema& schema) {
  Json out = Json::object();
  for (const auto& field : schema.fields()) out[field->key()] = field->write();
  return out;
}

std::vector<FieldDoc> document_fields(const Schema& schema) {
  std::vector<FieldDoc> docs;
  for (const auto& field : schema.fields()) docs.push_back(field->document());
  return docs;
}

void OptionTraits<bool>::read(const Json& value, bool& out, const ReadContext& ctx) {
  if (!value.is_boolean()) ctx.fail("expected boolean (true or false), got " + show_value(value));
  out = value.get<bool>();
}

void OptionTraits<double>::read(const Json& value, double& out, const ReadContext& ctx) {
  if (!value.is_number()) ctx.fail("expected number, got " + show_value(value));
  // NaN compares false with every bound, so it would pass every range check and then spread.
  if (std::isnan(value.get<double>())) ctx.fail("expected number, got .nan (not a number)");
  out = value.get<double>();
}

void OptionTraits<std::string>::read(const Json& value, std::string& out, const ReadContext& ctx) {
  if (!value.is_string()) ctx.fail("expected string, got " + show_value(value));
  out = value.get<std::string>();
}

}  // namespace kiln
