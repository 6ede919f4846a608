// Derived features' expressions (data.derived), as a config or a damaged preprocessing.json may
// hold them: any text parses to an expression or is a ConfigError, never deeper than its bound,
// and what parses evaluates over a record of every kind of feature to a value or a DataError.

#include <cstdint>
#include <string>

#include "kiln/core/error.h"
#include "kiln/tabular/derived_features.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::io::Features record = {{"fare", kiln::io::float_feature({10.5f})},
                                            {"tips", kiln::io::float_feature({2.0f})},
                                            {"trips", kiln::io::int64_feature({3})},
                                            {"payment_type", kiln::io::bytes_feature({"Cash"})},
                                            {"pair", kiln::io::int64_feature({1, 2})},
                                            {"empty", kiln::io::Feature{}}};
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::tabular::DerivedFeatures derived({{"x", text}, {"y", "is_missing(x)"}}, "data.derived");
    kiln::io::Features features = record;
    try {
      derived.apply(features, {"fuzz", 0, 0});
    } catch (const kiln::DataError&) {
    }
    // What parsed writes itself back and parses the same again.
    if (kiln::tabular::DerivedFeatures::from_json(derived.json(), "p").json() != derived.json())
      __builtin_trap();
  } catch (const kiln::ConfigError&) {
  }
  return 0;
}
