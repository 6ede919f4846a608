#include "kiln/core/json_keys.h"

#include <algorithm>

#include "kiln/core/suggest.h"

namespace kiln {

std::string first_unknown_key(const Json& object, const std::vector<std::string>& known) {
  if (!object.is_object()) return "";
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) return key;
  return "";
}

std::string unknown_key_problem(const Json& object, const std::vector<std::string>& known,
                                const std::string& what) {
  std::string key = first_unknown_key(object, known);
  if (key.empty()) return "";
  return "\"" + key + "\" is no key of " + what + " (" + suggestion_text(key, known) + ")";
}

}  // namespace kiln
