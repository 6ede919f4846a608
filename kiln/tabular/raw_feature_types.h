#pragma once
// What each raw feature of a model's training records looked like: the kind of its values
// (bytes, float or int64, as tf.Example holds them) and how many values a record holds, seen in
// the fitting pass and kept in preprocessing.json ("raw_features"), so that a served model can
// tell its clients what to send (the inputs of its metadata) without its training data.
//
// A feature seen with both floats and int64s (a CSV column of 3 and 3.5, a derived feature that
// is sometimes whole) is a float feature; one ever seen as bytes is a bytes feature. A record
// without the feature, or holding it without a value, is a missing value and not counted. A
// feature no training record held a value of is not listed: nothing says what it is.
// Thread-safety: a value; observe() and merge() on one thread at a time.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/io/example.h"

namespace kiln::tabular {

struct RawFeatureType {
  io::Feature::Kind kind = io::Feature::Kind::kNone;
  int64_t values = 1;  // values per record; kVaries when records hold different numbers
  static constexpr int64_t kVaries = -1;
  bool operator==(const RawFeatureType& other) const {
    return kind == other.kind && values == other.values;
  }
};

class RawFeatureTypes {
 public:
  RawFeatureTypes() = default;
  /// Ready to observe the features `names` (the raw features the columns need).
  explicit RawFeatureTypes(std::vector<std::string> names);
  /// Reads what json() wrote, for the raw features `names`: a ConfigError at `path` naming what
  /// is wrong when damaged (a kind that is none of the three nor unseen, a count below 1, a
  /// feature the columns do not read, one of theirs missing).
  static RawFeatureTypes from_json(const Json& json, const std::vector<std::string>& names,
                                   const std::string& path);

  /// Notes one record's features.
  void observe(const io::Features& record);
  /// Adds what another part of the same pass observed.
  void merge(const RawFeatureTypes& other);

  /// The features observed (those the columns read); empty when none were (never fitted).
  const std::vector<std::string>& names() const { return names_; }
  /// Each feature seen with a value, by name.
  std::map<std::string, RawFeatureType> types() const;
  /// {"NAME": {"kind": "float_list", "values": 1}, ...}; "values" -1 when it varies; every
  /// feature, {"kind": "unseen"} for one no record had.
  Json json() const;

 private:
  struct Seen {
    bool bytes = false, floats = false, ints = false;
    int64_t fewest = 0, most = 0;  // values per record, over records holding any
  };
  std::vector<std::string> names_;
  std::vector<Seen> seen_;
};

}  // namespace kiln::tabular
