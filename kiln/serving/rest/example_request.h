#pragma once
// Examples of raw features in a request body, for a model that reads them through feature columns
// (servable.h's ExampleEncoder):
//   :classify, :regress  {"signature_name": ..., "context": {feature: value|list},
//                         "examples": [{feature: value|list, ...}, ...]}  (TensorFlow Serving's)
//   :predict             {"instances": [{feature: value|list, ...}, ...]} (row form) or
//                        {"inputs": {feature: [value|list per example], ...}} (columnar form)
// Each value becomes a tf.Example feature as TensorFlow Serving makes it: a JSON integer an
// int64_list (true and false 1 and 0), a decimal (or bare NaN, Infinity) a float_list, a string
// or {"b64": ...} a bytes_list; a list holds values of one kind. Two requests TensorFlow Serving
// refuses kiln takes: integers among decimals are read as floats, and null (as an empty list) is
// a feature without values, which a column reads as missing.
// Thread-safety: pure functions.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/io/example.h"
#include "kiln/serving/predict_request.h"

namespace kiln::serving {

struct ExamplesRequest {
  std::string signature_name = "serving_default";
  RequestFormat format = RequestFormat::kRow;  // how a :predict answers
  std::vector<io::Features> examples;
};

/// A :classify or :regress body. The context's features are added to every example (an example's
/// own value of one wins). ServingError (kInvalidArgument) naming what is wrong: not JSON, no
/// list of examples or an empty one, an example that is not an object, a value of no feature
/// type.
ExamplesRequest parse_examples_request(const std::string& body);

/// A :predict body of raw features, for a model whose columns read `features` and whose
/// signatures take the tensors `tensor_inputs`; nothing when the body gives those tensors
/// instead (instances that are not objects, or objects of exactly the tensor inputs' names that
/// are no features). A feature the model does not read is an error here, unlike in examples: a
/// misspelt name would otherwise read as a missing value.
std::optional<ExamplesRequest> parse_feature_predict_request(
    const std::string& body, const std::vector<std::string>& features,
    const std::set<std::string>& tensor_inputs);

/// One value (or list of values) as a feature; ServingError naming `where` when it is none.
io::Feature feature_from_json(const Json& value, const std::string& where);

}  // namespace kiln::serving
