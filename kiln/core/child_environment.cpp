#include "kiln/core/child_environment.h"

#include <set>

extern char** environ;

namespace kiln {

std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& set) {
  std::set<std::string> names;
  for (const auto& [name, value] : set) names.insert(name);
  std::vector<std::string> out;
  for (char** at = environ; *at; ++at) {
    std::string entry = *at;
    if (!names.count(entry.substr(0, entry.find('=')))) out.push_back(entry);
  }
  for (const auto& [name, value] : set) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> c_string_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace kiln
