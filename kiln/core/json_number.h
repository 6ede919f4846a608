#pragma once
// Numbers that may be NaN or infinite, in JSON files kiln reads back (train_state.json): JSON has
// no such values, and nlohmann writes them as null, which reads back as no number at all. Here
// they are the strings "nan", "inf" and "-inf". Thread-safety: pure functions.

#include "kiln/core/json.h"

namespace kiln {

/// `value` as a JSON number, or as "nan", "inf" or "-inf".
Json number_to_json(double value);
/// Reads what number_to_json wrote; null (how older files hold a NaN) reads as NaN. Throws
/// kiln::Error saying what it found instead of a number.
double number_from_json(const Json& value);

}  // namespace kiln
