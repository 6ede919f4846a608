#pragma once
// A fast reader for the commonest predict bodies: numbers in nested lists, for one unnamed input
// in row or columnar form (`{"instances": [[...], ...]}`, `{"inputs": [[...], ...]}`) or for
// named inputs in columnar form (`{"inputs": {"a": [...], "b": [...]}}`), with an optional plain
// `signature_name`. It reads numbers with std::from_chars straight into the tensor, where the
// general reader (json_tensor.h) builds a JSON tree first: on a Fashion-MNIST image, parsing was
// the largest cost of a request after the model.
//
// It takes only bodies it is sure of: for anything else (other forms, strings, bools, NaN, an
// empty or ragged list, a shape or a value the signature refuses, escapes in a text, a repeated
// key, a byte that is not JSON) it returns nothing and the general reader reads the body, and
// words the error. What it returns is what the general reader returns for the same body, value
// for value (tests/fuzz/fuzz_predict_request.cpp holds it to that).
// Thread-safety: a pure function.

#include <optional>
#include <string_view>

#include "kiln/serving/predict_request.h"

namespace kiln::serving {

/// The request, or nothing when `body` is not one this reader takes. `inputs_of` is called once,
/// when the whole body has been read, and what it throws passes through.
std::optional<PredictRequest> parse_numeric_request(std::string_view body,
                                                    const SignatureInputs& inputs_of);

}  // namespace kiln::serving
