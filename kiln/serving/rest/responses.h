#pragma once
// The bodies of TensorFlow Serving's REST answers that are not tensors: model status and
// metadata (the proto3 JSON of GetModelStatusResponse and GetModelMetadataResponse;
// docs/formats.md §4, and a real metadata response in tests/data/), :classify's
// `{"results": [[[label, score], ...], ...]}` and :regress's `{"results": [value, ...]}`
// (api_rest.md).
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/serving/signature.h"
#include "kiln/serving/tensor.h"

namespace kiln::serving {

/// {"model_version_status": [{"version": "1", "state": "AVAILABLE", "status": {...}}, ...]}.
Json model_status_response(const std::vector<int64_t>& versions);

/// {"model_spec": {...}, "metadata": {"signature_def": {"signature_def": {NAME: {...}}}}}.
Json model_metadata_response(const std::string& model, int64_t version,
                             const Signatures& signatures);

/// :classify's body: each example's classes and scores (example_results.h's classify_results).
std::string classify_response(const SignatureOutput& output, const HostTensor& probabilities,
                              const std::vector<std::string>& labels);
/// :regress's body from its values.
std::string regress_response(const HostTensor& predictions);

}  // namespace kiln::serving
