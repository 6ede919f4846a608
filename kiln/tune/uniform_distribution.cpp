// uniform and loguniform: a real number between two bounds, drawn evenly on a linear or on a log
// scale (learning rates, weight decays).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kiln/core/error.h"
#include "kiln/tune/distribution.h"

namespace kiln::tune {
namespace {

struct RangeOptions {
  double low = 0, high = 1;
  void describe(Schema& s) {
    // Both bounds are given: a default bound (0 or 1) once searched a range nobody meant.
    s.field("low", low, "The smallest value.").require();
    s.field("high", high, "The largest value; above low.").require();
  }
};

// Evenly spaced over [low, high]; the middle alone for one point.
std::vector<double> spread(double low, double high, int64_t points) {
  if (points <= 1) return {(low + high) / 2};
  std::vector<double> out;
  for (int64_t i = 0; i < points; ++i)
    out.push_back(low + (high - low) * double(i) / double(points - 1));
  return out;
}

class Uniform : public Distribution {
 public:
  explicit Uniform(const RangeOptions& options) : low_(options.low), high_(options.high) {
    if (!(low_ < high_))
      throw ConfigError("high", "", fmt::format("must be above low ({}), got {}", low_, high_));
  }
  double low() const override { return low_; }
  double high() const override { return high_; }
  Json value(double coordinate) const override { return std::clamp(coordinate, low_, high_); }
  std::optional<double> coordinate(const Json& value) const override {
    if (!value.is_number()) return std::nullopt;
    double number = value.get<double>();
    if (number < low_ || number > high_) return std::nullopt;
    return number;
  }
  std::vector<double> grid(int64_t points) const override { return spread(low_, high_, points); }

 private:
  double low_, high_;
};

class LogUniform : public Distribution {
 public:
  explicit LogUniform(const RangeOptions& options) : low_(options.low), high_(options.high) {
    if (!(low_ > 0))
      throw ConfigError("low", "",
                        fmt::format("must be above 0 for loguniform, whose values are "
                                    "drawn on a log scale (got {}); use uniform for a range "
                                    "that reaches 0",
                                    low_));
    if (!(low_ < high_))
      throw ConfigError("high", "", fmt::format("must be above low ({}), got {}", low_, high_));
  }
  double low() const override { return std::log(low_); }
  double high() const override { return std::log(high_); }
  Json value(double coordinate) const override {
    // To 12 significant digits: exp(log(x)) is x give or take its last bits, and a config with
    // 1.0000000000000009e-4 for 1e-4 would be a poor read.
    double rounded = std::stod(fmt::format("{:.12g}", std::exp(coordinate)));
    return std::clamp(rounded, low_, high_);
  }
  std::optional<double> coordinate(const Json& value) const override {
    if (!value.is_number()) return std::nullopt;
    double number = value.get<double>();
    if (number < low_ || number > high_) return std::nullopt;
    return std::log(number);
  }
  std::vector<double> grid(int64_t points) const override { return spread(low(), high(), points); }

 private:
  double low_, high_;
};

}  // namespace

KILN_REGISTER(distribution_registry, "uniform", Uniform, RangeOptions,
              "A real number in [low, high], drawn evenly.");
KILN_REGISTER(distribution_registry, "loguniform", LogUniform, RangeOptions,
              "A real number in [low, high] (low > 0), drawn evenly on a log scale.");

}  // namespace kiln::tune
