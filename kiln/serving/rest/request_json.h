#pragma once
// The JSON of a request body as TensorFlow Serving reads it: JSON plus bare NaN, Infinity and
// -Infinity where a number may stand (api_rest.md, "JSON conformance"). What the predict reader
// (json_tensor.h) and the classify and regress reader (example_request.h) share.
// Thread-safety: pure functions.

#include <string>

#include "kiln/core/json.h"

namespace kiln::serving {

/// The body as JSON, each bare non-finite number kept as a marker object that
/// non_finite_number() reads. ServingError (kInvalidArgument) when it is not JSON.
Json parse_request_json(const std::string& body);

/// Whether `value` is the marker of a bare NaN or infinity; its number into `out` when it is.
bool non_finite_number(const Json& value, double& out);
/// The text of a marker ("NaN", "Infinity", "-Infinity"), or null when `value` is not one.
const std::string* non_finite_token(const Json& value);

/// `value` as an error message shows it: as the client wrote it, cut short.
std::string quoted_value(const Json& value);

}  // namespace kiln::serving
