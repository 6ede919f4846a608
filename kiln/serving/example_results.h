#pragma once
// What TensorFlow Serving's Classify and Regress answer, made from the outputs of a kiln
// signature, for both APIs to write in their form (rest/responses.h, grpc/grpc_messages.h): every
// class of each example and its probability, in class order; one number per example.
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "kiln/serving/servable.h"

namespace kiln::serving {

/// Which API asks, for the words of an error: REST's (`:classify`, `"signature_name"`,
/// `:predict`) or gRPC's (`Classify`, `model_spec.signature_name`, `Predict`).
enum class ExamplesApi { kRest, kGrpc };

/// The output :classify reads of `signature_name`: `probabilities` (softmax or sigmoid).
/// ServingError (kInvalidArgument) for a signature without it, naming the signatures (a
/// multi-head model's heads) that have one.
const SignatureOutput& classify_output(const Signatures& signatures,
                                       const std::string& signature_name,
                                       ExamplesApi api = ExamplesApi::kRest);
struct ScoredClass {
  std::string label;
  double score = 0;
};
/// Each example's classes and scores from that output's values, in class order: a class is named
/// by `labels` or by its id as text; one sigmoid column is the two classes 0 and 1, scored 1 - p
/// and p.
std::vector<std::vector<ScoredClass>> classify_results(const SignatureOutput& output,
                                                       const HostTensor& probabilities,
                                                       const std::vector<std::string>& labels);

/// The output :regress reads: `predictions`, one number per example. ServingError
/// (kInvalidArgument) for a signature without it or with several numbers per example.
const SignatureOutput& regress_output(const Signatures& signatures,
                                      const std::string& signature_name,
                                      ExamplesApi api = ExamplesApi::kRest);

/// The signatures as a client is shown them (the metadata). For a model that reads raw features:
/// every signature takes those features when it knows their kinds, the tensors its columns write
/// being the server's business (they are still taken); and each names the method it answers
/// besides Predict, classify where classify_output() finds its output, regress where
/// regress_output() does, as TensorFlow Serving's Predict takes either. Else signatures() as they
/// are.
Signatures shown_signatures(const Servable& servable);

}  // namespace kiln::serving
