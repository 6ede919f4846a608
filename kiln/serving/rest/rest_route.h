#pragma once
// The URLs of TensorFlow Serving's REST API (docs/formats.md §4, the expressions of
// http_rest_api_util.cc), matched as it matches them (case-insensitively; names kept as
// written):
//   GET  /v1/models/NAME[/versions/N | /labels/L][/metadata]
//   POST /v1/models/NAME[/versions/N | /labels/L]:(predict|classify|regress)
// Thread-safety: pure functions.

#include <string>

#include "kiln/serving/route.h"

namespace kiln::serving {

/// The route of `method` (GET, POST) and `path` (a query string is ignored). Throws ServingError
/// (kInvalidArgument) with TensorFlow Serving's messages: "Malformed request: POST /x", "Missing
/// model name in request.", "Failed to convert version: N".
Route parse_route(const std::string& method, const std::string& path);

}  // namespace kiln::serving
