#include "kiln/core/suggest.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // A third of the word's length (at least 2 edits) separates typos from unrelated names.
  size_t tolerance = std::max<size_t>(2, word.size() / 3);
  if (best && best_distance <= tolerance) return best;
  return std::nullopt;
}

std::string suggestion_text(const std::string& word, const std::vector<std::string>& candidates) {
  std::string text;
  if (auto guess = nearest(word, candidates)) text = fmt::format("did you mean \"{}\"? ", *guess);
  return text + fmt::format("known: {}", fmt::join(candidates, ", "));
}

}  // namespace kiln
