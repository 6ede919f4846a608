#pragma once
// Periods with units: `500 steps`, `2 epochs`, `1 epoch`, `100000 samples`, `30 min`, `90 s`,
// `2 h`. Parsed once when the config is read, never in the training loop (docs/design.md §4).
// Thread-safety: values.

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/core/schema.h"

namespace kiln {

/// How far training has got, in every unit a Period can be measured in.
struct Progress {
  int64_t steps = 0;
  double epochs = 0;  // fractional: 1.5 = half-way through the second epoch
  int64_t samples = 0;
  double seconds = 0;
};

class Period {
 public:
  enum class Unit { kSteps, kEpochs, kSamples, kSeconds };

  Period() = default;
  Period(double amount, Unit unit) : amount_(amount), unit_(unit) {}
  /// Parses text like `2 epochs`; throws kiln::Error whose message lists the accepted units.
  static Period parse(const std::string& text);

  double amount() const { return amount_; }
  Unit unit() const { return unit_; }
  /// Where `progress` stands in this period's unit.
  double measure(const Progress& progress) const;
  /// True once `progress` has covered the whole period.
  bool reached(const Progress& progress) const { return measure(progress) >= amount_; }
  /// The period in optimizer steps, rounded up, for `steps_per_epoch` steps of
  /// `samples_per_step` examples each; none for a time, whose step count is unknown ahead.
  std::optional<int64_t> in_steps(double steps_per_epoch, double samples_per_step) const;
  /// True when a multiple of the period lies in (before, now]: "every N units" triggers.
  bool crossed(const Progress& before, const Progress& now) const;
  std::string to_string() const;

 private:
  double amount_ = 1;
  Unit unit_ = Unit::kEpochs;
};

/// A period that may be absent (`null` or `0` in a config), e.g. a warm-up that is off.
struct OptionalPeriod {
  std::optional<Period> period;
};

template <>
struct OptionTraits<Period> {
  static void read(const Json& value, Period& out, const ReadContext& ctx);
  static Json write(const Period& value) { return value.to_string(); }
  static std::string type_name(const Period&) { return "period"; }
};

template <>
struct OptionTraits<OptionalPeriod> {
  static void read(const Json& value, OptionalPeriod& out, const ReadContext& ctx);
  static Json write(const OptionalPeriod& value);
  static std::string type_name(const OptionalPeriod&) { return "period | null"; }
};

}  // namespace kiln
