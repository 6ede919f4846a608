#pragma once
// Derived features (`data.derived: {big_tipper: "tips > 0.2 * fare", log_fare: "log1p(fare)"}`):
// features computed from a record's others before anything reads it, so that feature columns,
// the target and `data stats` read them as if the record had held them. Each expression may
// read the raw features and the derived features above it. They travel in preprocessing.json,
// so that evaluation, export, serving and `kiln predict` compute them as training did.
//
// A result is written as TensorFlow would hold it: a whole number (a comparison, a count) as an
// int64 feature, a fraction as a float feature, text as bytes; a missing result as a feature
// without a value, which the columns' `missing:` rules fill. A derived feature replaces a raw
// one of the same name.
// Thread-safety: immutable once built; apply() from any number of threads.

#include <string>
#include <utility>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/schema.h"
#include "kiln/io/example.h"
#include "kiln/tabular/expression.h"

namespace kiln::tabular {

class DerivedFeatures {
 public:
  DerivedFeatures() = default;
  /// `specs`: (name, expression) in order, as `path` (data.derived) gives them; a mistake is a
  /// ConfigError at `path.NAME`, naming the character; an expression reading a derived feature
  /// defined below it is one too. An expression reading its own name reads the raw feature it
  /// replaces.
  DerivedFeatures(const std::vector<std::pair<std::string, std::string>>& specs,
                  const std::string& path);
  /// What json() wrote (preprocessing.json's "derived"); a ConfigError at `path` when damaged.
  static DerivedFeatures from_json(const Json& derived, const std::string& path);

  bool empty() const { return derived_.empty(); }
  /// Adds each derived feature to `features`, in order; a DataError naming `where` for a value
  /// of the wrong kind.
  void apply(io::Features& features, const io::RecordLocation& where) const;
  /// {"NAME": "EXPRESSION", ...} in order: what data.derived said.
  Json json() const;
  /// The derived features' names, in order.
  std::vector<std::string> names() const;
  /// The raw features the expressions read, each once: a name read above its own derivation
  /// (`fare: "clip(fare, 0, 500)"`) is raw.
  std::vector<std::string> features() const;
  /// Only those derived features that `wanted` names or that they read, in order: what a model's
  /// inputs need (serving computes no label).
  DerivedFeatures needed_for(const std::vector<std::string>& wanted) const;

 private:
  std::vector<std::pair<std::string, Expression>> derived_;
};

/// The feature a derived value is written as; kNone for a missing one.
io::Feature feature_of(const Value& value);

}  // namespace kiln::tabular

namespace kiln {

/// `data.derived`: a mapping of feature names to expressions (strings), kept in order.
template <>
struct OptionTraits<tabular::DerivedFeatures> {
  static void read(const Json& value, tabular::DerivedFeatures& out, const ReadContext& ctx);
  static Json write(const tabular::DerivedFeatures& value) { return value.json(); }
  static std::string type_name(const tabular::DerivedFeatures&) {
    return "mapping of feature names to expressions";
  }
};

}  // namespace kiln
