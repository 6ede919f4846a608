#pragma once
// TensorFlow Serving's gRPC messages (tensorflow_serving/apis/) read into what the model table and
// the servables take, and answers written from what they give, with TensorFlow Serving's error
// messages: the ModelSpec of every request, Predict's named tensors and output filter, the
// examples of Classify and Regress, and the answers of all five methods. Torch- and gRPC-free
// apart from the generated messages; the service (prediction_service.h) runs them.
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/io/example.h"
#include "kiln/serving/example_results.h"
#include "kiln/serving/route.h"
#include "kiln/serving/servable.h"
#include "tensorflow_serving/apis/classification.pb.h"
#include "tensorflow_serving/apis/get_model_metadata.pb.h"
#include "tensorflow_serving/apis/get_model_status.pb.h"
#include "tensorflow_serving/apis/predict.pb.h"
#include "tensorflow_serving/apis/regression.pb.h"

namespace kiln::serving {

namespace tfs = tensorflow::serving;

/// The route a request's ModelSpec names (`spec` null when the request has none): ServingError
/// (kInvalidArgument) "Missing ModelSpec", or for a spec without a model name.
Route route_of(const tfs::ModelSpec* spec, RouteKind kind);
/// The signature a ModelSpec names: serving_default when it names none.
std::string signature_of(const tfs::ModelSpec& spec);

/// Predict's inputs, each checked against `signature`'s (tensor_proto.h): ServingError
/// (kInvalidArgument) with TensorFlow Serving's message for inputs sent extra or missing.
/// The values a Predict's tensors claim once expanded, from their shapes, before any is read;
/// INVALID_ARGUMENT for inputs the signature does not take, RESOURCE_EXHAUSTED past the
/// per-request limit (request_limits.h).
int64_t predict_values_claimed(const tfs::PredictRequest& request, const Signature& signature);
/// The same for a Predict of raw features (tensors no signature lists, which a model's columns
/// read): every tensor's claim, RESOURCE_EXHAUSTED past the per-request limit.
int64_t raw_values_claimed(const tfs::PredictRequest& request);
HostTensors predict_inputs(const tfs::PredictRequest& request, const Signature& signature,
                           int64_t max_rows);
/// The outputs Predict answers with: its output_filter, or every output of `signature`;
/// ServingError (kInvalidArgument) for an alias the signature lacks or one given twice.
std::vector<std::string> predict_outputs(const tfs::PredictRequest& request,
                                         const Signature& signature);
/// Predict's answer: the `names` of `outputs`, and the model spec that answered.
void fill_predict_response(const HostTensors& outputs, const std::vector<std::string>& names,
                           const tfs::ModelSpec& answered, tfs::PredictResponse& response);

/// The bytes examples_of makes of `input`: its own, and its context's once for each example.
/// ServingError (kInvalidArgument) "Input is empty." for no example, or for more than
/// `max_rows`; (kResourceExhausted) for a context whose copies would pass what one request may
/// expand to.
size_t examples_claimed(const tfs::Input& input, int64_t max_rows);
/// The examples of a Classify or Regress input, each with the context's features its own lack;
/// the errors of examples_claimed.
std::vector<io::Features> examples_of(const tfs::Input& input, int64_t max_rows);
/// Classify's result: each example's classes with their scores.
void fill_classification(const std::vector<std::vector<ScoredClass>>& classes,
                         tfs::ClassificationResult& result);
/// Regress's result: one value per example.
void fill_regression(const HostTensor& predictions, tfs::RegressionResult& result);

/// ServingError (kInvalidArgument) with TensorFlow Serving's messages when the request asks for
/// no metadata field or for one other than signature_def.
void check_metadata_fields(const tfs::GetModelMetadataRequest& request);
/// GetModelMetadata's answer: the signature_def field (an Any of SignatureDefMap), the only one
/// TensorFlow Serving has; ServingError (kInvalidArgument) with its messages when the request asks
/// for none or for another.
void fill_metadata(const tfs::GetModelMetadataRequest& request, const tfs::ModelSpec& answered,
                   const Signatures& signatures, tfs::GetModelMetadataResponse& response);
/// GetModelStatus's answer: each version AVAILABLE with an OK status.
void fill_status(const std::vector<int64_t>& versions, tfs::GetModelStatusResponse& response);

/// The ModelSpec of an answer: the model, the version that ran and the signature.
tfs::ModelSpec answered_spec(const std::string& model, int64_t version,
                             const std::string& signature);

}  // namespace kiln::serving
