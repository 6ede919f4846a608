#pragma once
// The distribution of one tuned parameter (`tune.space`: `optimizer.lr: {type: loguniform,
// low: 1.0e-4, high: 0.1}`). Samplers work in the distribution's search coordinate, a number in
// [low(), high()]: the value itself (uniform, int), its logarithm (loguniform, int with log) or
// the index of a choice; value() turns a coordinate into the config value, and coordinate() a
// config value back (snapped onto the values the distribution can take).
// Thread-safety: immutable once built.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/registry.h"

namespace kiln::tune {

class Distribution {
 public:
  virtual ~Distribution() = default;
  /// The search coordinate's range, closed; an int's reaches half a step past its ends, so that
  /// rounding gives the end values their share.
  virtual double low() const = 0;
  virtual double high() const = 0;
  /// Choices have no order: samplers treat their coordinate as a category.
  virtual int64_t choices() const { return 0; }
  /// The config value at `coordinate` (clamped into range).
  virtual Json value(double coordinate) const = 0;
  /// The coordinate of a value value() gave (snapped); nullopt for a value it cannot give.
  virtual std::optional<double> coordinate(const Json& value) const = 0;
  /// `points` coordinates spread evenly over the range (every value when it has no more).
  virtual std::vector<double> grid(int64_t points) const = 0;
  /// Where a sampled coordinate lands: the coordinate of the value it stands for.
  double snap(double coordinate) const { return *this->coordinate(value(coordinate)); }
};

using DistributionRegistry = Registry<Distribution>;
DistributionRegistry& distribution_registry();

}  // namespace kiln::tune
