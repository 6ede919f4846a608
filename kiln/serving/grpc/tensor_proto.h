#pragma once
// TensorFlow's TensorProto (tensorflow/core/framework/tensor.proto), the tensors of TensorFlow
// Serving's gRPC API, read into host tensors and written from them, for every dtype kiln serves
// (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_STRING). Reading accepts what TensorFlow's
// own clients send: values as little-endian `tensor_content` bytes (tf.make_tensor_proto of an
// array) or in the dtype's repeated field (float_val, int64_val, ...), where fewer values than
// elements repeat the last one and none fill with zeros, as TensorFlow reads them. Writing uses
// the repeated fields, as TensorFlow Serving answers.
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/serving/request_limits.h"
#include "kiln/serving/tensor.h"
#include "tensorflow/core/framework/tensor.pb.h"

namespace kiln::serving {

/// TensorFlow's DataType of a dtype kiln serves.
tensorflow::DataType tf_data_type(DType dtype);
/// The dtype kiln serves as `type`; none for the others.
std::optional<DType> served_dtype(tensorflow::DataType type);

/// The tensor `input` of a request, checked against the signature's `spec` before any value is
/// read: its dtype, its rank and fixed dimensions, at most `max_rows` in its first dimension, and
/// exactly as many values as its shape holds. An image input also takes a DT_STRING tensor of one
/// encoded image per example, decoded as its training data was. ServingError (kInvalidArgument)
/// naming the input and what is wrong.
HostTensor tensor_from_proto(const tensorflow::TensorProto& proto, const std::string& input,
                             const TensorSpec& spec, int64_t max_rows);

/// The values `proto`'s shape claims, from its shape alone (rank and size checked as when it is
/// read). ServingError (kInvalidArgument) naming `what`.
int64_t claimed_values(const tensorflow::TensorProto& proto, const std::string& what);
/// Adds `values` to what a request has claimed so far (`claimed`), refusing it with
/// RESOURCE_EXHAUSTED naming the limit once over kMaxRequestValues (request_limits.h).
void claim_values(int64_t& claimed, int64_t values, const std::string& what);

/// `tensor` as a TensorProto, its values in the dtype's repeated field.
void tensor_to_proto(const HostTensor& tensor, tensorflow::TensorProto& proto);

/// The host tensor a TensorProto holds, whatever its shape (a client reading an answer); the same
/// checks but those against a signature. ServingError (kInvalidArgument) naming `what`.
HostTensor tensor_from_answer(const tensorflow::TensorProto& proto, const std::string& what);

}  // namespace kiln::serving
