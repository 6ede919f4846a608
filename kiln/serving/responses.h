#pragma once
// The bodies of TensorFlow Serving's model status and metadata responses (the proto3 JSON of
// GetModelStatusResponse and GetModelMetadataResponse; docs/formats.md §4, and a real
// metadata response in tests/data/).
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/serving/signature.h"

namespace kiln::serving {

/// {"model_version_status": [{"version": "1", "state": "AVAILABLE", "status": {...}}, ...]}.
Json model_status_response(const std::vector<int64_t>& versions);

/// {"model_spec": {...}, "metadata": {"signature_def": {"signature_def": {NAME: {...}}}}}.
Json model_metadata_response(const std::string& model, int64_t version,
                             const Signatures& signatures);

}  // namespace kiln::serving
