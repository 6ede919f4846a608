#pragma once
// The parameters a study tunes (`tune.space`): each a config path with the distribution its values
// are drawn from and, optionally, a condition (`when: {optimizer: sgd}`) on an earlier choice:
// a parameter used only when that choice took one of the given values.
//
//   tune:
//     space:
//       optimizer: {type: choice, values: [{type: adam, lr: 0.001}, {type: sgd, lr: 0.1}]}
//       optimizer.momentum: {type: uniform, low: 0.5, high: 0.99, when: {optimizer: sgd}}
//       model.layers[0].out: {type: int, low: 16, high: 256, log: true}
//
// Parameters are applied to a config in the order written, so a choice of a whole component comes
// before the options set inside it. Torch-free. Thread-safety: immutable once read.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/core/registry.h"
#include "kiln/tune/distribution.h"

namespace kiln::tune {

/// Where a parameter applies: `parameter` (an earlier choice) took one of `values`; a value that
/// is a string also matches a component of that type (`sgd` matches `{type: sgd, ...}`).
struct Condition {
  std::string parameter;
  std::vector<Json> values;
  bool holds(const Json& chosen) const;
};

struct Parameter {
  std::string name;  // the config path it sets
  ComponentSpec spec{"distribution"};
  std::shared_ptr<const Distribution> distribution;
  std::optional<Condition> when;
};

/// One trial's parameters: the search coordinate of each active one, by name.
using Assignment = std::map<std::string, double>;

class SearchSpace {
 public:
  SearchSpace() = default;
  /// Reads `tune.space` (`ctx` at it); throws ConfigError naming the parameter.
  static SearchSpace read(const Json& space, const ReadContext& ctx);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  const Parameter& at(const std::string& name) const;
  /// Whether `parameter` applies given the values `so_far` holds of the earlier ones.
  bool active(const Parameter& parameter, const Assignment& so_far) const;
  /// The config value of each parameter of `assignment`, by name, in the space's order.
  Json values(const Assignment& assignment) const;
  /// The assignment whose values() are `values`; nullopt when one is not a value of the space.
  std::optional<Assignment> assignment_of(const Json& values) const;
  /// Sets each parameter of `assignment` in `config`, in the space's order.
  void apply(const Assignment& assignment, RawConfig& config, const std::string& origin) const;
  /// The parameters sharing one condition (the unconditional ones first), in order: samplers
  /// that model parameters jointly model each group over the trials where it applied.
  std::vector<std::vector<const Parameter*>> groups() const;

 private:
  std::vector<Parameter> parameters_;
};

}  // namespace kiln::tune

namespace kiln {
template <>
struct OptionTraits<tune::SearchSpace> {
  static void read(const Json& value, tune::SearchSpace& out, const ReadContext& ctx) {
    out = tune::SearchSpace::read(value, ctx);
  }
  static Json write(const tune::SearchSpace& value);
  static std::string type_name(const tune::SearchSpace&) {
    return "mapping of config paths to distributions";
  }
};
}  // namespace kiln
