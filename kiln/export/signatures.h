#pragma once
// The signatures an export serves (serving/signature.h), derived from the model and the losses it
// was trained with. serving_default gives, for each output, what its loss makes of it: a
// classifier trained with cross-entropy its `classes` (labels), `class_ids`, `probabilities` and
// `logits`; one trained with binary cross-entropy its `probabilities`, `class_ids` (above 0.5)
// and `logits`; any other its `predictions`, or its `reconstruction` when it redraws its input
// (an autoencoder's `embedding` comes along). A multi_head model's outputs are HEAD/NAME there,
// and each head is also a signature of its own, named after it. `embed` gives the embedding
// layer's activations (models/embedding_layer.h). Signatures are computed on batches that went
// through the eval transforms, as validation's did.
// Thread-safety: a model runs on one thread at a time.

#include <map>
#include <string>
#include <vector>

#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"
#include "kiln/models/embedding_layer.h"
#include "kiln/serving/signature.h"

namespace kiln::exports {

/// The signatures of `model` (in eval mode) over `inputs`, its single output trained with `loss`
/// (a multi_head model's heads name their own); found by running it once on an example of zeros.
serving::Signatures derive_signatures(models::Model& model,
                                      const std::vector<experiment::ModelInput>& inputs,
                                      const experiment::Transforms& transforms,
                                      const ComponentSpec& loss,
                                      const models::EmbeddingLayer& embedding);

/// A signature's outputs for a batch as the data delivers it (before the eval transforms), each
/// with the batch dimension first: class ids where the output is a label (argmax_label).
std::map<std::string, torch::Tensor> run_signature(models::Model& model,
                                                   const serving::Signature& signature,
                                                   const experiment::Transforms& transforms,
                                                   const models::EmbeddingLayer& embedding,
                                                   const torch::Tensor& input);

/// A signature's outputs from a model's named outputs (`outputs[""]` its main one) and, for the
/// outputs of a layer, its `embedded` activations. Throws an Error naming an output whose model
/// output is missing.
std::map<std::string, torch::Tensor> signature_outputs(const serving::Signature& signature,
                                                       const models::NamedOutputs& outputs,
                                                       const torch::Tensor& embedded);

/// The serving dtype a torch dtype travels as in JSON: narrower integers as int32, half floats as
/// float32.
serving::DType serving_dtype(torch::Dtype dtype);

}  // namespace kiln::exports
