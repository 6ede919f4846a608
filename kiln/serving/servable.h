#pragma once
// One loaded version of a served model, as the REST handler sees it: its signatures, and a
// predict that runs one of them on host tensors (batch dimension first) and gives its outputs.
// Torch-free: engine/exported_servable.h is the one over a kiln export; tests use fakes.
// Thread-safety: predict() and predict_async() may be called from several threads at once.

#include <exception>
#include <functional>
#include <map>
#include <string>

#include "kiln/serving/json_tensor.h"
#include "kiln/serving/signature.h"

namespace kiln::serving {

using HostTensors = std::map<std::string, HostTensor>;
/// Told the outputs of a predict_async(), or the error that stopped them (a ServingError as a
/// rule; `outputs` is then empty).
using PredictDone = std::function<void(HostTensors outputs, std::exception_ptr error)>;

class Servable {
 public:
  virtual ~Servable() = default;
  virtual const Signatures& signatures() const = 0;
  /// The outputs of `signature` (one of signatures()) for `inputs`, already checked against it.
  virtual std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) = 0;
  /// predict() with its answer given to `done` once, never thrown: by default on this thread
  /// before returning, by a servable that queues requests (serving/batcher.h) later on its own.
  virtual void predict_async(const std::string& signature, HostTensors inputs, PredictDone done) {
    HostTensors outputs;
    try {
      outputs = predict(signature, inputs);
    } catch (...) {
      done({}, std::current_exception());
      return;
    }
    done(std::move(outputs), nullptr);
  }
};

}  // namespace kiln::serving
