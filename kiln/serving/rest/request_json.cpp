#include "kiln/serving/rest/request_json.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "kiln/core/json_text.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

// Bare NaN and infinities are not JSON; TensorFlow Serving takes them anyway. Before parsing,
// each becomes an object of this one key ({"\u0001": "NaN"}): where a number may stand, no other
// object is taken, so it cannot be mistaken for data (a string with the same bytes stays text).
constexpr const char* kNonFiniteKey = "\\u0001";
const std::string kNonFiniteKeyDecoded = "\x01";

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The non-finite token that stands whole at `i` of `body`, or "".
std::string non_finite_token_at(const std::string& body, size_t i) {
  if (i > 0 && is_word_char(body[i - 1])) return "";
  for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
    size_t n = std::char_traits<char>::length(token);
    if (body.compare(i, n, token) == 0 && (i + n == body.size() || !is_word_char(body[i + n])))
      return token;
  }
  return "";
}

std::string with_non_finite_quoted(const std::string& body) {
  std::string out;
  out.reserve(body.size());
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < body.size())
        out += body[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    std::string token = non_finite_token_at(body, i);
    if (!token.empty()) {
      out += fmt::format("{{\"{}\":\"{}\"}}", kNonFiniteKey, token);
      i += token.size() - 1;
      continue;
    }
    in_string = c == '"';
    out += c;
  }
  return out;
}

}  // namespace

const std::string* non_finite_token(const Json& value) {
  if (!value.is_object() || value.size() != 1) return nullptr;
  auto found = value.find(kNonFiniteKeyDecoded);
  if (found == value.end() || !found->is_string()) return nullptr;
  const std::string& token = found->get_ref<const std::string&>();
  return token == "NaN" || token == "Infinity" || token == "-Infinity" ? &token : nullptr;
}

std::string quoted_value(const Json& value) {
  if (const std::string* token = non_finite_token(value)) return *token;
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

bool non_finite_number(const Json& value, double& out) {
  const std::string* found = non_finite_token(value);
  if (!found) return false;
  const std::string& token = *found;
  out = token == "NaN"
            ? std::numeric_limits<double>::quiet_NaN()
            : (token == "-Infinity" ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
  return true;
}

Json parse_request_json(const std::string& body) {
  // The pre-pass looks at every character; most bodies hold no NaN or Infinity at all, which two
  // searches tell far sooner (it was a sixth of the server's time on image requests).
  bool may_hold_non_finite =
      body.find("NaN") != std::string::npos || body.find("Infinity") != std::string::npos;
  try {
    return parse_json_text(may_hold_non_finite ? with_non_finite_quoted(body) : body);
  } catch (const JsonTextError& e) {
    throw ServingError(StatusCode::kInvalidArgument,
                       fmt::format("the request body is not JSON: {}", e.what()));
  }
}

}  // namespace kiln::serving
