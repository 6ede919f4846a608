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

// Builds the tree from nlohmann's parse events, refusing an object that holds a key twice:
// nlohmann keeps the last value, other readers the first (RapidJSON, which TF Serving uses), so
// the text meant one thing to its writer and may mean another here. Why not nlohmann's own
// builder: it adds each key through the ordered object's operator[], which searches the keys
// before it one by one, so an object of n keys cost n^2 / 2 comparisons (100,000 keys: 23 s).
// Here a key known to be new is appended, and the keys are hashed once an object has many.
class LinearTreeBuilder {
 public:
  LinearTreeBuilder(Json& result, size_t max_depth) : result_(result), max_depth_(max_depth) {}

  bool null() { return place(nullptr); }
  bool boolean(bool value) { return place(value); }
  bool number_integer(Json::number_integer_t value) { return place(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return place(value); }
  bool number_float(Json::number_float_t value, const std::string&) { return place(value); }
  bool string(std::string& value) { return place(std::move(value)); }
  bool binary(Json::binary_t& value) { return place(Json::binary(std::move(value))); }
  bool start_array(size_t) {
    open_.push_back(placed(Json::array()));
    check_depth();
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool start_object(size_t) {
    open_.push_back(placed(Json::object()));
    objects_.push_back({keys_.size(), nullptr});
    check_depth();
    return true;
  }
  bool key(std::string& name) {
    if (!first_time(name))
      throw JsonTextError(fmt::format("an object holds the key \"{}\" twice", name), -1);
    value_slot_ = &append_new_key(*open_.back(), std::move(name), nullptr);
    return true;
  }
  bool end_object() {
    keys_.resize(objects_.back().first_key);
    objects_.pop_back();
    open_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(size_t, const std::string&, const Exception& error) {
    throw error;
  }

 private:
  // Puts `value` where the text has it: the whole result, the next element of the open array,
  // or the value of the key just read. The slot stays valid until the next key or element of
  // its container, and nothing is added to a container while a value inside it is open.
  Json* placed(Json value) {
    if (open_.empty()) {
      result_ = std::move(value);
      return &result_;
    }
    Json& container = *open_.back();
    if (container.is_array()) {
      auto& elements = container.get_ref<Json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    *value_slot_ = std::move(value);
    return value_slot_;
  }
  bool place(Json value) {
    placed(std::move(value));
    return true;
  }

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

  // nlohmann's parser keeps its own stack, so the depth can be checked as the tree grows; text
  // whose comments may hold brackets cannot be scanned for it beforehand.
  void check_depth() const {
    if (open_.size() > max_depth_)
      throw JsonTextError(fmt::format("nested more than {} levels deep", max_depth_), -1);
  }

  Json& result_;
  size_t max_depth_;
  std::vector<Json*> open_;        // the arrays and objects being filled, outermost first
  Json* value_slot_ = nullptr;     // the value of the key read last
  std::vector<std::string> keys_;  // of the open objects searched in order, outermost first
  std::vector<OpenObject> objects_;
};

Json parse_refusing_repeated_keys(const std::string& text, size_t max_depth, bool ignore_comments) {
  Json result;
  LinearTreeBuilder parser(result, max_depth);
  Json::sax_parse(text, &parser, nlohmann::detail::input_format_t::json, true, ignore_comments);
  return result;
}

}  // namespace

namespace {

// The first byte at which `stop(c)` is true of a character outside JSON strings (brackets and
// separators inside a string are text), or std::string::npos.
template <class Stop>
size_t first_outside_strings(const std::string& text, Stop stop) {
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
    } else if (stop(c)) {
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

size_t json_depth_exceeded_at(const std::string& text, size_t max_depth) {
  // Deep text needs at least max_depth + 1 bytes of brackets: most bodies skip the scan.
  if (text.size() <= max_depth) return std::string::npos;
  size_t depth = 0;
  return first_outside_strings(text, [&](char c) {
    if (c == '[' || c == '{') return ++depth > max_depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    return false;
  });
}

size_t json_values_exceeded_at(const std::string& text, size_t max_values) {
  // Every value and key but the first follows a bracket, comma or colon: fewer bytes than the
  // limit hold fewer values.
  if (text.size() <= max_values) return std::string::npos;
  size_t values = 1;
  return first_outside_strings(text, [&](char c) {
    return (c == '[' || c == '{' || c == ',' || c == ':') && ++values > max_values;
  });
}

namespace {

// nlohmann's messages open with its own id ("[json.exception.parse_error.101] "), which tells the
// reader of a message nothing.
std::string without_library_id(const char* what) {
  std::string_view text = what;
  size_t end = text.find("] ");
  if (text.rfind("[json.exception.", 0) == 0 && end != std::string_view::npos)
    text.remove_prefix(end + 2);
  return std::string(text);
}

}  // namespace

Json parse_json_text(const std::string& text, size_t max_depth, size_t max_values) {
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
  size_t many = json_values_exceeded_at(text, max_values);
  if (many != std::string::npos)
    throw JsonTextError(fmt::format("more than {} values and keys by {} (byte {})", max_values,
                                    line_and_column(text, many), many),
                        static_cast<int64_t>(many));
  try {
    return parse_refusing_repeated_keys(text, max_depth, false);
  } catch (const Json::parse_error& e) {
    throw JsonTextError(without_library_id(e.what()), static_cast<int64_t>(e.byte) - 1);
  } catch (const Json::exception& e) {  // out_of_range: a number past a double's range (1e400)
    throw JsonTextError(without_library_id(e.what()), -1);
  }
}

Json parse_json_with_comments(const std::string& text, size_t max_depth) {
  try {
    return parse_refusing_repeated_keys(text, max_depth, true);
  } catch (const Json::parse_error& e) {
    throw JsonTextError(without_library_id(e.what()), static_cast<int64_t>(e.byte) - 1);
  } catch (const Json::exception& e) {
    throw JsonTextError(without_library_id(e.what()), -1);
  }
}

Json& append_new_key(Json& object, std::string key, Json value) {
  auto& members = object.get_ref<Json::object_t&>();
  members.emplace_back(std::move(key), std::move(value));  // the vector's own append: no search
  return members.back().second;
}

std::string dump_json(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json read_json_file(const std::string& path, size_t max_values) {
  std::string text = read_text_file(path);
  try {
    return parse_json_text(text, kMaxJsonDepth, max_values);
  } catch (const JsonTextError& e) {
    throw DataError(path, -1, e.byte(), e.what());
  }
}

}  // namespace kiln
