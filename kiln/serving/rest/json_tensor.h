#pragma once
// TensorFlow Serving's JSON tensors (docs/formats.md §4; api_rest.md): predict
// requests in row form (`"instances"`: one entry per example, all inputs sharing the first
// dimension) or columnar form (`"inputs"`: each input a whole tensor), read into host tensors
// checked against a signature's inputs; and responses (`"predictions"` for a row request,
// `"outputs"` for a columnar one) written back with TensorFlow Serving's number formatting. Bare
// NaN, Infinity and -Infinity are read and written, as TensorFlow Serving does. Binary strings
// travel as {"b64": "..."}. Torch-free: the server turns these into tensors.
// Thread-safety: pure functions.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/serving/predict_request.h"

namespace kiln::serving {

/// Reads a :predict body for a signature taking `inputs`. Throws ServingError
/// (kInvalidArgument) saying what is wrong and where: not JSON, both or neither of
/// instances/inputs, an unknown or missing input, a ragged list, a value of the wrong type, a
/// shape the signature does not take, bad base64.
PredictRequest parse_predict_request(const std::string& body,
                                     const std::map<std::string, TensorSpec>& inputs);
/// The same for a model of several signatures: `inputs_of` gives the inputs of the signature the
/// body names.
PredictRequest parse_predict_request(const std::string& body, const SignatureInputs& inputs_of);
/// The same without the fast path for bodies of numbers only (numeric_request.h): the reader of
/// every body, and the reference the fast path is tested against.
PredictRequest parse_predict_request_in_full(const std::string& body,
                                             const SignatureInputs& inputs_of);

/// The response body for `outputs` (each with the batch dimension first in row form): one
/// output is written without its name, several as objects, as TensorFlow Serving does.
std::string predict_response(const std::map<std::string, HostTensor>& outputs,
                             RequestFormat format);

/// Each example's outputs as one JSON object (the entries of a row-form response's
/// "predictions", named even when there is one output): what `kiln predict` writes per line.
std::vector<std::string> prediction_rows(const std::map<std::string, HostTensor>& outputs);

/// A float as TensorFlow Serving writes it: 6 significant digits when they read back as the
/// same value, else all it takes; ".0" after a whole number; NaN, Infinity, -Infinity.
std::string format_float(double value, bool single_precision);

}  // namespace kiln::serving
