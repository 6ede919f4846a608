#include "kiln/core/json_number.h"

#include <cmath>
#include <limits>

#include "kiln/core/error.h"

namespace kiln {

Json number_to_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double number_from_json(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw Error("expected a number (or \"nan\", \"inf\", \"-inf\"), got " + show_value(value));
}

std::string show_value(const Json& value) {
  if (value.is_number_float() && std::isnan(value.get<double>())) return ".nan";
  if (value.is_number_float() && std::isinf(value.get<double>()))
    return value.get<double>() > 0 ? ".inf" : "-.inf";
  constexpr size_t kLongest = 200;
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
  return text;
}

}  // namespace kiln
