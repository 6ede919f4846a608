#include "kiln/core/json_text.h"

#include <fmt/format.h>

#include <algorithm>

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
    return Json::parse(text);
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
