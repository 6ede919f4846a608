#include "kiln/board/query_params.h"

#include <fmt/format.h>

#include "kiln/core/error.h"

namespace kiln::board {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `part` decoded; `what` names it in the error.
std::string decoded(std::string_view part, std::string_view what) {
  std::string out;
  out.reserve(part.size());
  for (size_t i = 0; i < part.size(); ++i) {
    char c = part[i];
    if (c == '+') {
      out += ' ';
      continue;
    }
    if (c != '%') {
      out += c;
      continue;
    }
    int high = i + 2 < part.size() ? hex_value(part[i + 1]) : -1;
    int low = high >= 0 ? hex_value(part[i + 2]) : -1;
    if (low < 0)
      throw UsageError(
          fmt::format("the query's {}: '%' must begin an escape of two hex digits", what));
    char byte = char(high * 16 + low);
    if (byte == '\0') throw UsageError(fmt::format("the query's {} holds a NUL byte (%00)", what));
    out += byte;
    i += 2;
  }
  return out;
}

}  // namespace

QueryParams QueryParams::parse(std::string_view query) {
  QueryParams params;
  size_t at = 0;
  while (at <= query.size()) {
    size_t end = query.find('&', at);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(at, end - at);
    at = end + 1;
    if (pair.empty()) continue;
    size_t equals = pair.find('=');
    std::string name = decoded(pair.substr(0, equals), "parameter name");
    std::string value = equals == std::string_view::npos
                            ? std::string()
                            : decoded(pair.substr(equals + 1), "parameter " + name);
    params.params_.emplace_back(std::move(name), std::move(value));
  }
  return params;
}

std::string QueryParams::get(std::string_view name) const {
  for (const auto& [key, value] : params_)
    if (key == name) return value;
  return "";
}

std::vector<std::string> QueryParams::all(std::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [key, value] : params_)
    if (key == name) values.push_back(value);
  return values;
}

}  // namespace kiln::board
