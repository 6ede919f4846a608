#pragma once
// The steps of TensorFlow Serving's prediction methods that both front ends (rest/, grpc/) take
// alike, written once: the servable of a model that reads raw features (Classify, Regress), and
// a request's inputs handed to its version's servable (the batcher), dropped unrun once its
// client has gone, with the servable kept until the answer has been sent. Finding the version is
// the model table's (model_table.h), the row limit request_limits.h's, the budget
// held_bytes.h's; each front end only decodes its wire form and encodes the answer.
// Thread-safety: as the servable's.

#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "kiln/net/abandoned.h"
#include "kiln/serving/example_results.h"
#include "kiln/serving/model_table.h"
#include "kiln/serving/servable.h"

namespace kiln::serving {

/// The encoder of a version that reads raw features; ServingError (kInvalidArgument) for one
/// that reads tensors, naming `model` and the method to use instead in `api`'s words.
const ExampleEncoder& examples_encoder(const FoundVersion& found, const std::string& model,
                                       ExamplesApi api);

/// Told a request's outputs, or the error that stopped them, once, on whichever thread ran it;
/// `servable` is to be released where the answer is sent, not here: a version retired while it
/// ran must not be destroyed on its own batcher's thread, which its destructor joins.
using Ran = std::function<void(HostTensors outputs, std::exception_ptr error,
                               std::shared_ptr<const void> servable)>;

/// Runs `inputs` on the `signature` of the version found.
void submit(FoundVersion found, const std::string& signature, HostTensors inputs,
            net::Abandoned abandoned, Ran ran);

}  // namespace kiln::serving
