#include "kiln/core/yaml_json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/eventhandler.h>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

namespace kiln {
namespace {

bool is_one_of(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* word : words)
    if (text == word) return true;
  return false;
}

// Scanners for the YAML 1.2 core schema's number forms (std::regex made loading a config
// mostly regex matching): each consumes what it accepts from `at` and says whether it did.
bool digits_from(const std::string& text, size_t& at, bool (*is_digit)(char)) {
  size_t start = at;
  while (at < text.size() && is_digit(text[at])) ++at;
  return at > start;
}
bool is_decimal(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_decimal(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
void sign_from(const std::string& text, size_t& at) {
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
}

// [-+]?[0-9]+, 0x[0-9a-fA-F]+ or 0o[0-7]+: the base, or 0 for none of them.
int integer_base(const std::string& text) {
  size_t at = 0;
  sign_from(text, at);
  if (digits_from(text, at, is_decimal) && at == text.size()) return 10;
  bool prefixed = text.size() > 2 && text[0] == '0';
  at = 2;
  if (prefixed && text[1] == 'x' && digits_from(text, at, is_hex) && at == text.size()) return 16;
  at = 2;
  if (prefixed && text[1] == 'o' && digits_from(text, at, is_octal) && at == text.size()) return 8;
  return 0;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float_text(const std::string& text) {
  size_t at = 0;
  sign_from(text, at);
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (!digits_from(text, at, is_decimal)) return false;
  } else {
    if (!digits_from(text, at, is_decimal)) return false;
    if (at < text.size() && text[at] == '.') digits_from(text, ++at, is_decimal);
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    sign_from(text, ++at);
    if (!digits_from(text, at, is_decimal)) return false;
  }
  return at == text.size();
}

// YAML 1.2 core schema; decimal, 0x and 0o integers.
bool parse_integer(const std::string& text, Json& out) {
  int base = integer_base(text);
  if (base == 0) return false;
  std::string digits = base == 10 ? text : text.substr(2);
  errno = 0;
  long long value = std::strtoll(digits.c_str(), nullptr, base);
  if (errno == ERANGE && base == 10 && digits[0] != '-') {
    // JSON's unsigned integers up to 2^64 - 1 read back as they were written.
    errno = 0;
    unsigned long long large = std::strtoull(digits.c_str(), nullptr, base);
    if (errno == ERANGE) return false;
    out = static_cast<uint64_t>(large);
    return true;
  }
  if (errno == ERANGE) return false;  // too large: kept as a string, reported by the schema
  out = static_cast<int64_t>(value);
  return true;
}

bool parse_float(const std::string& text, Json& out) {
  if (is_float_text(text)) {
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

namespace {

// Walks a parsed document into JSON. Aliases share nodes in yaml-cpp, so a document can describe
// a graph: a cycle (`a: &a {b: *a}`) or nested aliases that expand exponentially ("billion
// laughs"). Both are refused by the limits, as is a mapping that names a key twice.
class YamlConverter {
 public:
  YamlConverter(const std::string& origin, const YamlLimits& limits)
      : origin_(origin), limits_(limits) {}

  Json convert(const YAML::Node& node, const std::string& path) {
    check_limits(node, path);
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        // yaml-cpp tags plain scalars "?" and quoted ones "!".
        return node.Tag() == "!" ? Json(node.Scalar()) : plain_scalar(node.Scalar());
      case YAML::NodeType::Sequence:
        return within(node, path, [&] {
          Json list = Json::array();
          for (const auto& item : node)
            list.push_back(convert(item, path + "[" + std::to_string(list.size()) + "]"));
          return list;
        });
      case YAML::NodeType::Map:
        return within(node, path, [&] { return convert_map(node, path); });
    }
    return nullptr;
  }

 private:
  Json convert_map(const YAML::Node& node, const std::string& path) {
    Json object = Json::object();
    std::map<std::string, int> lines;
    for (const auto& entry : node) {
      std::string key = entry.first.as<std::string>();
      std::string child = path.empty() ? key : path + "." + key;
      int line = entry.first.Mark().line + 1;
      auto [seen, fresh] = lines.emplace(key, line);
      if (!fresh)
        fail(child, fmt::format("duplicate key \"{}\" (lines {} and {}); a mapping names each key "
                                "once",
                                key, seen->second, line));
      append_new_key(object, key, convert(entry.second, child));  // new: `lines` says so
    }
    return object;
  }

  template <class Build>
  Json within(const YAML::Node& node, const std::string& path, Build build) {
    for (const auto& open : open_)
      if (open.is(node))
        fail(path, fmt::format("an alias at line {} refers to a node that contains it: "
                               "a recursive structure has no config meaning",
                               node.Mark().line + 1));
    open_.push_back(node);
    Json out = build();
    open_.pop_back();
    return out;
  }

  // A node met again is met through an alias: only those count against max_values, so that a
  // long document of its own values (a model.yaml of 100,000 labels) is read whole while one
  // whose aliases repeat aliases is refused. A node is known by where it begins in the text.
  void check_limits(const YAML::Node& node, const std::string& path) {
    if (!met_.insert(node.Mark().pos).second && ++repeated_ > limits_.max_values)
      fail(path, fmt::format("the document expands to more than {} values through its aliases "
                             "(aliases repeated inside aliases?)",
                             limits_.max_values));
    if (open_.size() >= limits_.max_depth)
      fail(path, fmt::format("nested more than {} levels deep", limits_.max_depth));
  }

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw ConfigError(path, origin_, problem);
  }

  const std::string& origin_;
  const YamlLimits& limits_;
  std::vector<YAML::Node> open_;  // the collections being converted, outermost first
  std::unordered_set<int> met_;   // where each node met begins
  size_t repeated_ = 0;           // values met again, through aliases
};

}  // namespace

namespace {

// Counts the parser's events and stops at the first past the limit: no node is built.
class EventCounter : public YAML::EventHandler {
 public:
  explicit EventCounter(size_t most) : most_(most) {}
  struct TooMany {
    YAML::Mark mark;
  };
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    count(mark);
  }
  void OnMapEnd() override {}

 private:
  void count(const YAML::Mark& mark) {
    if (++seen_ > most_) throw TooMany{mark};
  }
  size_t most_, seen_ = 0;
};

}  // namespace

void check_yaml_size(const std::string& text, const std::string& origin, const YamlLimits& limits) {
  std::istringstream in(text);
  EventCounter counter(2 * limits.max_values);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(counter)) {
    }
  } catch (const EventCounter::TooMany& past) {
    throw ConfigError("", origin,
                      fmt::format("more than {} values and keys (line {}, column {}): too large "
                                  "for a file of settings",
                                  2 * limits.max_values, past.mark.line + 1, past.mark.column + 1));
  } catch (const YAML::Exception&) {
    // Malformed: the parse that follows says where and why.
  }
}

Json yaml_to_json(const YAML::Node& node, const std::string& origin, const YamlLimits& limits) {
  return YamlConverter(origin, limits).convert(node, "");
}

namespace {

// Escaped, a character can take six (\u0001): keys up to this long stay within YAML's 1024.
constexpr size_t kLongestImplicitKey = 128;

// Written plain at the start of a line, "---" or "..." would read back as a document's end or a
// new (empty) document: such text is quoted, as a key or as a value.
bool looks_like_document_marker(const std::string& text) {
  return text.rfind("---", 0) == 0 || text.rfind("...", 0) == 0;
}

}  // namespace

void emit_yaml(YAML::Emitter& out, const Json& value) {
  if (value.is_object()) {
    if (value.empty()) out << YAML::Flow;
    out << YAML::BeginMap;
    for (const auto& [key, child] : value.items()) {
      out << YAML::Key;
      // A key written plain or quoted ("implicit") may be at most 1024 characters long in YAML;
      // a long one is written after "? ", with room for what quoting and escapes add.
      if (key.size() > kLongestImplicitKey) out << YAML::LongKey;
      if (looks_like_document_marker(key)) out << YAML::DoubleQuoted;
      out << key << YAML::Value;
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
    if (looks_like_document_marker(text) || !plain_scalar(text).is_string())
      out << YAML::DoubleQuoted;
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
