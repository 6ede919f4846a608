#include "kiln/core/input_layout.h"

#include "kiln/core/error.h"
#include "kiln/core/json_keys.h"

namespace kiln {
namespace {

int64_t whole_number(const Json& entry, const char* key, const std::string& file) {
  if (!entry.is_object() || !entry.contains(key) || !entry[key].is_number_integer() ||
      entry[key].get<int64_t>() < 0)
    throw ConfigError(
        file, "",
        std::string("layout entry without a whole number \"") + key + "\": " + show_value(entry));
  return entry[key].get<int64_t>();
}

std::string text(const Json& entry, const char* key, const std::string& file) {
  if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string())
    throw ConfigError(
        file, "",
        std::string("layout entry without a \"") + key + "\" string: " + show_value(entry));
  return entry[key].get<std::string>();
}

const Json& list(const Json& json, const char* key, const std::string& file) {
  static const Json empty = Json::array();
  if (!json.contains(key)) return empty;
  if (!json[key].is_array())
    throw ConfigError(file, "", std::string("the layout's \"") + key + "\" is not a list");
  return json[key];
}

// A key the layout does not have was written by hand, and would be passed over in silence.
void refuse_unknown_keys(const Json& entry, const std::vector<std::string>& keys, const char* what,
                         const std::string& file) {
  std::string unknown = unknown_key_problem(entry, keys, what);
  if (!unknown.empty()) throw ConfigError(file, "", unknown);
}

}  // namespace

const InputPart* InputLayout::find(const std::string& name) const {
  for (const InputPart& part : parts)
    if (part.name == name) return &part;
  return nullptr;
}

std::string InputLayout::names() const {
  std::string all;
  for (const InputPart& part : parts) all += (all.empty() ? "" : ", ") + part.name;
  return all;
}

std::vector<InputIndex> InputLayout::indices_in(const InputPart& part) const {
  std::vector<InputIndex> inside;
  for (const InputIndex& index : indices)
    if (index.position >= part.offset && index.position < part.offset + part.width)
      inside.push_back(index);
  return inside;
}

Json layout_json(const InputLayout& layout) {
  Json parts = Json::array(), indices = Json::array();
  for (const InputPart& part : layout.parts)
    parts.push_back({{"name", part.name}, {"offset", part.offset}, {"width", part.width}});
  for (const InputIndex& index : layout.indices)
    indices.push_back({{"column", index.column},
                       {"position", index.position},
                       {"cardinality", index.cardinality},
                       {"embedding_dim", index.embedding_dim}});
  return {{"parts", parts}, {"indices", indices}};
}

InputLayout parse_layout(const Json& json, int64_t row_width, const std::string& file) {
  if (!json.is_object()) throw ConfigError(file, "", "the input layout is not an object");
  refuse_unknown_keys(json, {"parts", "indices"}, "the input layout", file);
  InputLayout layout;
  int64_t end = 0;
  for (const Json& entry : list(json, "parts", file)) {
    refuse_unknown_keys(entry, {"name", "offset", "width"}, "an input part", file);
    InputPart part{text(entry, "name", file), whole_number(entry, "offset", file),
                   whole_number(entry, "width", file)};
    if (part.offset != end)
      throw ConfigError(file, "", "input part \"" + part.name + "\" does not follow the last");
    end = part.offset + part.width;
    layout.parts.push_back(std::move(part));
  }
  if (!layout.parts.empty() && end != row_width)
    throw ConfigError(file, "",
                      "the input parts span " + std::to_string(end) + " of the row's " +
                          std::to_string(row_width) + " numbers");
  for (const Json& entry : list(json, "indices", file)) {
    refuse_unknown_keys(entry, {"column", "position", "cardinality", "embedding_dim"},
                        "an input index", file);
    InputIndex index{text(entry, "column", file), whole_number(entry, "position", file),
                     whole_number(entry, "cardinality", file),
                     whole_number(entry, "embedding_dim", file)};
    if (index.position >= row_width)
      throw ConfigError(file, "", "index of column \"" + index.column + "\" is outside the row");
    if (index.cardinality < 1)
      throw ConfigError(file, "", "index of column \"" + index.column + "\" has no bucket");
    layout.indices.push_back(std::move(index));
  }
  return layout;
}

}  // namespace kiln
