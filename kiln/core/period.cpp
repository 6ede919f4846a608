#include "kiln/core/period.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "kiln/core/error.h"

namespace kiln {
namespace {

constexpr const char* kUnits =
    "units: step(s), epoch(s), sample(s), s/sec/second(s), min/minute(s), h/hour(s)";
// The largest amount of a unit: counts stay exact doubles, seconds stay finite.
constexpr double kMaxPeriodAmount = 9007199254740992.0;  // 2^53

constexpr const char* kAccepted =
    "expected a period like \"500 steps\", \"2 epochs\", \"100000 samples\", \"30 min\"";

struct UnitInfo {
  Period::Unit unit;
  double seconds_per;  // for time units
};

const std::map<std::string, UnitInfo>& units() {
  using U = Period::Unit;
  static const std::map<std::string, UnitInfo> table = {
      {"step", {U::kSteps, 0}},     {"steps", {U::kSteps, 0}},     {"epoch", {U::kEpochs, 0}},
      {"epochs", {U::kEpochs, 0}},  {"sample", {U::kSamples, 0}},  {"samples", {U::kSamples, 0}},
      {"s", {U::kSeconds, 1}},      {"sec", {U::kSeconds, 1}},     {"secs", {U::kSeconds, 1}},
      {"second", {U::kSeconds, 1}}, {"seconds", {U::kSeconds, 1}}, {"min", {U::kSeconds, 60}},
      {"mins", {U::kSeconds, 60}},  {"minute", {U::kSeconds, 60}}, {"minutes", {U::kSeconds, 60}},
      {"h", {U::kSeconds, 3600}},   {"hour", {U::kSeconds, 3600}}, {"hours", {U::kSeconds, 3600}},
  };
  return table;
}

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

Period Period::parse(const std::string& raw) {
  std::string text = trim(raw);
  char* end = nullptr;
  double amount = std::strtod(text.c_str(), &end);
  // Every message lists the units, as period.h promises.
  auto reject = [&raw](const std::string& why) {
    return Error(fmt::format("{}, got \"{}\" ({})", why, raw, kUnits));
  };
  // strtod stops at a NUL byte: "1 epoch\0junk" must not read as "1 epoch".
  if (end == text.c_str() || text.find('\0') != std::string::npos) throw reject(kAccepted);
  auto unit = units().find(trim(std::string(end)));
  if (unit == units().end()) throw reject(kAccepted);
  if (!(amount > 0) || !std::isfinite(amount)) throw reject("a period must be positive");
  bool whole_unit = unit->second.unit == Unit::kSteps || unit->second.unit == Unit::kSamples;
  if (whole_unit && amount != std::floor(amount))
    throw reject("steps and samples are whole numbers");
  if (unit->second.unit == Unit::kSeconds) amount *= unit->second.seconds_per;
  // Beyond 2^53 a count is no longer exact, and 1e308 hours would become infinite seconds.
  if (!(amount <= kMaxPeriodAmount)) throw reject("a period must be at most 2^53 of its unit");
  return Period(amount, unit->second.unit);
}

double Period::measure(const Progress& progress) const {
  switch (unit_) {
    case Unit::kSteps:
      return static_cast<double>(progress.steps);
    case Unit::kEpochs:
      return progress.epochs;
    case Unit::kSamples:
      return static_cast<double>(progress.samples);
    case Unit::kSeconds:
      return progress.seconds;
  }
  return 0;
}

std::optional<int64_t> Period::in_steps(double steps_per_epoch, double samples_per_step) const {
  double steps = 0;
  switch (unit_) {
    case Unit::kSteps:
      steps = amount_;
      break;
    case Unit::kEpochs:
      steps = amount_ * steps_per_epoch;
      break;
    case Unit::kSamples:
      steps = amount_ / std::max(1e-9, samples_per_step);
      break;
    case Unit::kSeconds:
      return std::nullopt;
  }
  // Past what an int64 holds (1e15 epochs of 1e6 steps) the period never ends.
  if (!(steps < 9e18)) return std::numeric_limits<int64_t>::max();
  // The slack keeps 0.3 epochs of 10 steps (3.0000000000000004) at 3 steps, as crossed() does.
  return static_cast<int64_t>(std::ceil(steps - 1e-9));
}

bool Period::crossed(const Progress& before, const Progress& now) const {
  // A small tolerance keeps 0.1 + 0.2 epochs from missing the boundary at 0.3.
  constexpr double kSlack = 1e-9;
  return std::floor(measure(now) / amount_ + kSlack) >
         std::floor(measure(before) / amount_ + kSlack);
}

std::string Period::to_string() const {
  auto plural = [this](const char* one, const char* many) {
    return fmt::format("{} {}", amount_, amount_ == 1 ? one : many);
  };
  switch (unit_) {
    case Unit::kSteps:
      return plural("step", "steps");
    case Unit::kEpochs:
      return plural("epoch", "epochs");
    case Unit::kSamples:
      return plural("sample", "samples");
    case Unit::kSeconds:
      if (std::fmod(amount_, 3600) == 0) return fmt::format("{} h", amount_ / 3600);
      if (std::fmod(amount_, 60) == 0) return fmt::format("{} min", amount_ / 60);
      return fmt::format("{} s", amount_);
  }
  return "";
}

void OptionTraits<Period>::read(const Json& value, Period& out, const ReadContext& ctx) {
  if (!value.is_string())
    ctx.fail(fmt::format("{}, got {}", "expected a period string", show_value(value)));
  try {
    out = Period::parse(value.get<std::string>());
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}

void OptionTraits<OptionalPeriod>::read(const Json& value, OptionalPeriod& out,
                                        const ReadContext& ctx) {
  if (value.is_null() || value == 0) {
    out.period.reset();
    return;
  }
  Period period;
  OptionTraits<Period>::read(value, period, ctx);
  out.period = period;
}

Json OptionTraits<OptionalPeriod>::write(const OptionalPeriod& value) {
  return value.period ? Json(value.period->to_string()) : Json();
}

}  // namespace kiln
