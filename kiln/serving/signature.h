#pragma once
// A served model's signatures, as model.yaml's `signatures:` holds them: for each name
// (serving_default, embed, one per head of a multi-head model) the inputs it takes and the outputs
// it gives, with their dtypes and shapes (-1 for the batch dimension), and how each output comes
// from the model: which head's output (`from`; "" for the main one) and what is done with it
// (`op`: identity, softmax, sigmoid, argmax, above_half, argmax_label, or layer: the activations
// of a layer). Torch-free: the exported model computes them (export/export.h).
// Thread-safety: values and pure functions.

#include <map>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/serving/tensor.h"

namespace kiln::serving {

enum class OutputOp {
  kIdentity,     // the head's output as it is: logits, predictions, a reconstruction
  kSoftmax,      // probabilities over its last dimension
  kSigmoid,      // the probability of a binary classifier's one logit
  kArgmax,       // the index of the largest logit: the class id
  kAboveHalf,    // 1 where a sigmoid output's probability is above 0.5, else 0
  kArgmaxLabel,  // the class id's label (its number as text without labels)
  kLayer,        // the activations of `layer` (the input of the last layer when "")
};

struct SignatureOutput {
  TensorSpec spec;
  std::string from;  // the model output it is computed from: "" the main one, else a head's name
  OutputOp op = OutputOp::kIdentity;
  std::string layer;  // kLayer: the layer's dotted name, "" for the input of the last layer
};

struct Signature {
  std::map<std::string, TensorSpec> inputs;
  std::map<std::string, SignatureOutput> outputs;
  std::string method;  // as the metadata names it; empty: kPredictMethod (shown_signatures)
};

using Signatures = std::map<std::string, Signature>;

/// The methods TensorFlow Serving's metadata names: every signature answers Predict; a model that
/// reads raw features also answers Classify on a signature with probabilities, and Regress on one
/// predicting one number per example, and its metadata says so (shown_signatures).
inline constexpr const char* kPredictMethod = "tensorflow/serving/predict";
inline constexpr const char* kClassifyMethod = "tensorflow/serving/classify";
inline constexpr const char* kRegressMethod = "tensorflow/serving/regress";
/// `signature.method`, or kPredictMethod when it has none.
std::string method_of(const Signature& signature);

std::string output_op_name(OutputOp op);

/// `signatures:` of model.yaml.
Json signatures_json(const Signatures& signatures);
/// Reads them back; a DataError naming `file` and the signature, input or output at fault.
Signatures parse_signatures(const Json& json, const std::string& file);

}  // namespace kiln::serving
