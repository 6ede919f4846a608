#pragma once
// "Did you mean" suggestions for misspelt config keys and component names.
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Levenshtein distance between two strings (insert, delete, substitute each cost 1).
size_t edit_distance(const std::string& a, const std::string& b);

/// The candidate nearest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> nearest(const std::string& word,
                                   const std::vector<std::string>& candidates);

/// `did you mean "x"? ` (or nothing) followed by `known: a, b, c`, for error messages.
std::string suggestion_text(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace kiln
