#include "kiln/core/json_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"

namespace kiln {
namespace {

std::string line_and_column(const std::string& text, size_t at) {
  size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  size_t column = line_start == std::string::npos ? at + 1 : at - line_start;
  return fmt::format("line {}, column {}", line, column);
}

// Builds the tree as nlohmann's own parser does, refusing an object that holds a key twice:
// nlohmann keeps the last value, other readers the first (RapidJSON, which TF Serving uses), so
// the text meant one thing to its writer and may mean another here. (nlohmann's parse callback
// could do the same at eight times the parse's cost; these events cost a few percent.)
class RepeatedKeyRefusingParser {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;
  explicit RepeatedKeyRefusingParser(Json& result) : dom_(result) {}

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(Json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(Json::number_float_t value, const std::string& text) {
    return dom_.number_float(value, text);
  }
  bool string(std::string& value) { return dom_.string(value); }
  bool binary(Json::binary_t& value) { return dom_.binary(value); }
  bool start_array(size_t length) { return dom_.start_array(length); }
  bool end_array() { return dom_.end_array(); }
  bool start_object(size_t length) {
    objects_.push_back({keys_.size(), nullptr});
    return dom_.start_object(length);
  }
  bool key(std::string& name) {
    if (!first_time(name))
      throw JsonTextError(fmt::format("an object holds the key \"{}\" twice", name), -1);
    return dom_.key(name);
  }
  bool end_object() {
    keys_.resize(objects_.back().first_key);
    objects_.pop_back();
    return dom_.end_object();
  }
  template <class Exception>
  bool parse_error(size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);  // throws it
  }

 private:
  // An object's keys are searched one by one while they are few, and hashed beyond: a request of
  // one object with a million keys must not take a million squared comparisons.
  static constexpr size_t kKeysSearchedInOrder = 16;
  struct OpenObject {
    size_t first_key;  // in keys_
    std::unique_ptr<std::unordered_set<std::string>> hashed;
  };
  bool first_time(const std::string& name) {
    OpenObject& object = objects_.back();
    if (object.hashed) return object.hashed->insert(name).second;
    auto begin = keys_.begin() + static_cast<std::ptrdiff_t>(object.first_key);
    if (std::find(begin, keys_.end(), name) != keys_.end()) return false;
    if (keys_.size() - object.first_key < kKeysSearchedInOrder) {
      keys_.push_back(name);
      return true;
    }
    object.hashed = std::make_unique<std::unordered_set<std::string>>(begin, keys_.end());
    keys_.resize(object.first_key);
    return object.hashed->insert(name).second;
  }

  Dom dom_;
  std::vector<std::string> keys_;  // of the open objects searched in order, outermost first
  std::vector<OpenObject> objects_;
};

Json parse_refusing_repeated_keys(const std::string& text) {
  Json result;
  RepeatedKeyRefusingParser parser(result);
  Json::sax_parse(text, &parser);
  return result;
}

}  // namespace

size_t json_depth_exceeded_at(const std::string& text, size_t max_depth) {
  // Deep text needs at least max_depth + 1 bytes of brackets: most bodies skip the scan.
  if (text.size() <= max_depth) return std::string::npos;
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

Json parse_json_text(const std::string& text, size_t max_depth) {
  // nlohmann's lexer takes a NUL byte for the end of the input and would accept what follows it
  // unread; JSON text holds no NUL anywhere (in a string it is written \u0000).
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    throw JsonTextError(fmt::format("a NUL byte at {} (byte {}); JSON text holds none",
                                    line_and_column(text, nul), nul),
                        static_cast<int64_t>(nul));
  size_t deep = json_depth_exceeded_at(text, max_depth);
  if (deep != std::string::npos)
    throw JsonTextError(fmt::format("nested more than {} levels deep at {} (byte {})", max_depth,
                                    line_and_column(text, deep), deep),
                        static_cast<int64_t>(deep));
  try {
    return parse_refusing_repeated_keys(text);
  } catch (const Json::parse_error& e) {
    throw JsonTextError(e.what(), static_cast<int64_t>(e.byte) - 1);
  } catch (const Json::exception& e) {  // out_of_range: a number past a double's range (1e400)
    throw JsonTextError(e.what(), -1);
  }
}

std::string dump_json(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json read_json_file(const std::string& path) {
  std::string text = read_text_file(path);
  try {
    return parse_json_text(text);
  } catch (const JsonTextError& e) {
    throw DataError(path, -1, e.byte(), e.what());
  }
}

}  // namespace kiln
