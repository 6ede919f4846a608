#pragma once
// The command line of a trial of a program (`tune.command: [python3, train.py, --lr, "{lr}"]`):
// each `{NAME}` in an argument is the trial's value of the parameter NAME (a number as JSON
// writes it, a text choice as its text, any other choice as JSON), `{trial}` its number and
// `{trial_dir}` its folder; `{{` and `}}` are braces. An argument naming a parameter the trial
// does not use (a condition left it out) is left out, so that `--momentum={momentum}` goes
// with it.
// Torch-free. Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tune/search_space.h"

namespace kiln::tune {

/// Checks `command` (tune.command) against `space`: a program first, every placeholder a
/// parameter's name or trial or trial_dir, braces paired. ConfigError at tune.command[i]
/// naming the placeholder and the names it may be.
void check_command_line(const std::vector<std::string>& command, const SearchSpace& space);

/// The arguments of trial `number` (the program first) with its values in place.
std::vector<std::string> trial_command_line(const std::vector<std::string>& command,
                                            const SearchSpace& space, const Assignment& assignment,
                                            int64_t number, const std::string& trial_dir);

}  // namespace kiln::tune
