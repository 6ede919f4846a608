// choice: one of a list of values, any YAML (numbers, strings, whole components such as
// `{type: sgd, momentum: 0.9}`); the values have no order.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kiln/core/error.h"
#include "kiln/tune/distribution.h"

namespace kiln::tune {
namespace {

struct ChoiceOptions {
  std::vector<Json> values;
  void describe(Schema& s) {
    s.field("values", values, "The values to choose from (any YAML), at least two.");
  }
};

class Choice : public Distribution {
 public:
  explicit Choice(const ChoiceOptions& options) : values_(options.values) {
    if (values_.size() < 2)
      throw ConfigError("values", "",
                        fmt::format("a choice needs two values or more, got {}", values_.size()));
    for (size_t i = 0; i < values_.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (values_[i] == values_[j])
          throw ConfigError(fmt::format("values[{}]", i), "",
                            fmt::format("repeats values[{}] ({})", j, values_[j].dump()));
  }
  double low() const override { return 0; }
  double high() const override { return double(values_.size() - 1); }
  int64_t choices() const override { return int64_t(values_.size()); }
  Json value(double coordinate) const override {
    auto index = std::clamp<int64_t>(std::llround(coordinate), 0, choices() - 1);
    return values_[size_t(index)];
  }
  std::optional<double> coordinate(const Json& value) const override {
    auto found = std::find(values_.begin(), values_.end(), value);
    if (found == values_.end()) return std::nullopt;
    return double(found - values_.begin());
  }
  std::vector<double> grid(int64_t) const override {
    std::vector<double> out;
    for (size_t i = 0; i < values_.size(); ++i) out.push_back(double(i));
    return out;
  }

 private:
  std::vector<Json> values_;
};

}  // namespace

KILN_REGISTER(distribution_registry, "choice", Choice, ChoiceOptions,
              "One of a list of values (any YAML, components included).");

}  // namespace kiln::tune
