#include "kiln/tune/command_line.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <optional>

#include "kiln/core/error.h"

namespace kiln::tune {
namespace {

constexpr const char* kTrial = "trial";
constexpr const char* kTrialDir = "trial_dir";

// `text` with each {NAME} replaced by what `value_of` gives (none: the argument is left out);
// an Error saying what is wrong with the braces.
std::optional<std::string> substituted(
    const std::string& text,
    const std::function<std::optional<std::string>(const std::string&)>& value_of) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}')
      throw Error(fmt::format("a '}}' at character {} closes no '{{' (write }}}} for one)", i));
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = text.find('}', i);
    if (close == std::string::npos)
      throw Error(fmt::format("the '{{' at character {} is not closed (write {{{{ for one)", i));
    std::optional<std::string> value = value_of(text.substr(i + 1, close - i - 1));
    if (!value) return std::nullopt;
    out += *value;
    i = close;
  }
  return out;
}

std::string text_of(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

void check_command_line(const std::vector<std::string>& command, const SearchSpace& space) {
  if (command.empty()) return;
  std::vector<std::string> names = {kTrial, kTrialDir};
  for (const Parameter& p : space.parameters()) {
    // {trial} and {trial_dir} are kiln's: a parameter of either name never reached the program.
    if (p.name == kTrial || p.name == kTrialDir)
      throw ConfigError("tune.space." + p.name, "",
                        fmt::format("is a name tune.command keeps for the trial's {}: {{{}}} "
                                    "gives that, never this parameter's value; name the "
                                    "parameter otherwise (the program's own flag is free to be "
                                    "--{})",
                                    p.name == kTrial ? "number" : "folder", p.name, p.name));
    names.push_back(p.name);
  }
  if (command.front().empty() || command.front().find('{') != std::string::npos)
    throw ConfigError("tune.command[0]", "",
                      "is the program each trial runs (python3, ./train.sh): a name without {}");
  for (size_t i = 1; i < command.size(); ++i) {
    try {
      substituted(command[i], [&](const std::string& name) -> std::optional<std::string> {
        if (std::find(names.begin(), names.end(), name) == names.end())
          throw Error(fmt::format("{{{}}} names no parameter; it may be {{{}}}", name,
                                  fmt::join(names, "}, {")));
        return "";
      });
    } catch (const Error& e) {
      throw ConfigError(fmt::format("tune.command[{}]", i), "",
                        fmt::format("\"{}\": {}", command[i], e.what()));
    }
  }
}

std::vector<std::string> trial_command_line(const std::vector<std::string>& command,
                                            const SearchSpace& space, const Assignment& assignment,
                                            int64_t number, const std::string& trial_dir) {
  Json values = space.values(assignment);
  std::vector<std::string> line = {command.front()};
  for (size_t i = 1; i < command.size(); ++i) {
    std::optional<std::string> argument =
        substituted(command[i], [&](const std::string& name) -> std::optional<std::string> {
          if (name == kTrial) return std::to_string(number);
          if (name == kTrialDir) return trial_dir;
          if (!values.contains(name)) return std::nullopt;  // not used by this trial
          return text_of(values[name]);
        });
    if (argument) line.push_back(std::move(*argument));
  }
  return line;
}

}  // namespace kiln::tune
