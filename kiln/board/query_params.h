#pragma once
// The parameters of a request's query (`run=a%2Fb&filter=x&filter=y`), as the board's page
// sends them with URLSearchParams: percent escapes decoded, `+` a space, a name given more than
// once kept with all its values in order. A malformed escape, or one that decodes to a NUL byte
// (which would cut a run's path short where the system reads it), is refused.
// Torch-free. Thread-safety: a parsed QueryParams is read-only.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::board {

class QueryParams {
 public:
  /// Throws UsageError naming the parameter and what is wrong with it.
  static QueryParams parse(std::string_view query);

  /// The first value of `name`; "" when it is not given.
  std::string get(std::string_view name) const;
  /// Every value of `name`, in the order given.
  std::vector<std::string> all(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace kiln::board
