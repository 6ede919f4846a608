#pragma once
// gRPC Predict of raw features, for a model that reads them through feature columns (servable.h's
// ExampleEncoder): the request's inputs are named after the features, as the model's metadata
// lists them, each a tensor whose first dimension is the examples; each example's row of a tensor
// becomes that example's feature, as a tf.Example would hold it: DT_STRING a bytes_list,
// DT_FLOAT and DT_DOUBLE a float_list, DT_INT32, DT_INT64 and DT_BOOL an int64_list (the same
// feature kinds the REST API's JSON values become). A feature a request leaves out is missing in
// every example; the columns' `missing:` rules fill it.
// Thread-safety: pure functions.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/io/example.h"
#include "kiln/serving/signature.h"
#include "tensorflow_serving/apis/predict.pb.h"

namespace kiln::serving {

/// The examples of a Predict request of raw features, for a model whose columns read `features`
/// and whose signature is `signature`; nothing when the request sends the signature's tensors
/// instead (exactly its inputs' names), or no input at all. ServingError (kInvalidArgument) for
/// a feature the model does not read, a tensor without an examples dimension, tensors of
/// different numbers of examples, none, or more than `max_rows`, and for a tensor whose shape
/// does not fit the feature's in `raw_inputs` (ExampleEncoder::raw_inputs; a feature not there is
/// not checked). All from the shapes, before any value is read: RESOURCE_EXHAUSTED when they claim
/// more than kMaxRequestValues together.
std::optional<std::vector<io::Features>> raw_predict_examples(
    const tensorflow::serving::PredictRequest& request, const Signature& signature,
    const std::vector<std::string>& features, const std::map<std::string, TensorSpec>& raw_inputs,
    int64_t max_rows);

}  // namespace kiln::serving
