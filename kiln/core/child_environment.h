#pragma once
// What a process started with posix_spawn is given: this process's environment with some
// variables set (a launcher's RANK, a study's KILN_TUNE_TRIAL), and argument and environment
// lists as the NULL-terminated `char*` arrays posix_spawn takes.
// Thread-safety: environment_with() reads `environ`; call it where nothing sets variables.

#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// This process's `NAME=value` entries, those named in `set` replaced by their values there.
std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& set);

/// Pointers into `strings` followed by a null pointer; valid while `strings` is unchanged.
std::vector<char*> c_string_array(std::vector<std::string>& strings);

}  // namespace kiln
