// int: a whole number in [low, high], every `step`-th from low, drawn evenly on a linear or (with
// `log`) a log scale (widths, layer counts, batch sizes).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/core/error.h"
#include "kiln/tune/distribution.h"

namespace kiln::tune {
namespace {

struct IntOptions {
  int64_t low = 0, high = 10, step = 1;
  bool log = false;
  void describe(Schema& s) {
    s.field("low", low, "The smallest value.").require();
    s.field("high", high, "The largest value; above low (with a step: the last step at or below).")
        .require();
    s.field("step", step, "Values are low, low + step, ...").min(1);
    s.field("log", log, "Drawn evenly on a log scale (low >= 1, step 1).");
  }
};

class IntDistribution : public Distribution {
 public:
  explicit IntDistribution(const IntOptions& options)
      : low_(options.low), step_(options.step), log_(options.log) {
    if (options.high <= low_)
      throw ConfigError("high", "",
                        fmt::format("must be above low ({}), got {}", low_, options.high));
    if (log_ && low_ < 1)
      throw ConfigError("low", "", fmt::format("must be 1 or more with log: true, got {}", low_));
    if (log_ && step_ != 1)
      throw ConfigError("step", "", "must be 1 with log: true (a log scale has no even steps)");
    high_ = low_ + (options.high - low_) / step_ * step_;
  }
  double low() const override { return log_ ? std::log(low_ - 0.5) : low_ - step_ / 2.0; }
  double high() const override { return log_ ? std::log(high_ + 0.5) : high_ + step_ / 2.0; }
  Json value(double coordinate) const override { return nearest(coordinate); }
  std::optional<double> coordinate(const Json& value) const override {
    if (!value.is_number_integer()) return std::nullopt;
    int64_t number = value.get<int64_t>();
    if (number < low_ || number > high_ || (number - low_) % step_ != 0) return std::nullopt;
    return log_ ? std::log(double(number)) : double(number);
  }
  std::vector<double> grid(int64_t points) const override {
    std::set<int64_t> values;
    int64_t count = (high_ - low_) / step_ + 1;
    int64_t n = std::min(count, std::max<int64_t>(points, 1));
    for (int64_t i = 0; i < n; ++i) {
      double at = n == 1 ? 0.5 : double(i) / double(n - 1);
      double ends[2] = {log_ ? std::log(double(low_)) : double(low_),
                        log_ ? std::log(double(high_)) : double(high_)};
      values.insert(nearest(ends[0] + at * (ends[1] - ends[0])));
    }
    std::vector<double> out;
    for (int64_t v : values) out.push_back(*coordinate(v));
    return out;
  }

 private:
  int64_t nearest(double coordinate) const {
    if (log_) return std::clamp<int64_t>(std::llround(std::exp(coordinate)), low_, high_);
    int64_t steps = std::llround((coordinate - double(low_)) / double(step_));
    return std::clamp<int64_t>(low_ + steps * step_, low_, high_);
  }

  int64_t low_, high_ = 0, step_;
  bool log_;
};

}  // namespace

KILN_REGISTER(distribution_registry, "int", IntDistribution, IntOptions,
              "A whole number in [low, high] in steps, on a linear or a log scale.");

}  // namespace kiln::tune
