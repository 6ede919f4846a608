#pragma once
// One loaded version of a served model, as the REST handler sees it: its signatures, and a
// predict that runs one of them on host tensors (batch dimension first) and gives its outputs;
// for a model that reads raw features, the encoder that makes those tensors of examples.
// Torch-free: export/exported_servable.h is the one over a kiln export; tests use fakes.
// Thread-safety: predict() and predict_async() may be called from several threads at once.

#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/io/example.h"
#include "kiln/net/abandoned.h"
#include "kiln/serving/serving_error.h"
#include "kiln/serving/signature.h"
#include "kiln/serving/tensor.h"

namespace kiln::serving {

using HostTensors = std::map<std::string, HostTensor>;
/// Told the outputs of a predict_async(), or the error that stopped them (a ServingError as a
/// rule; `outputs` is then empty).
using PredictDone = std::function<void(HostTensors outputs, std::exception_ptr error)>;

/// How a model trained on feature columns (`data.columns`) takes examples of raw features (a
/// tf.Example's, by name): it writes them into its signatures' inputs as training wrote its
/// records (:predict with feature values, :classify, :regress).
class ExampleEncoder {
 public:
  virtual ~ExampleEncoder() = default;
  /// The features its columns read.
  virtual const std::vector<std::string>& features() const = 0;
  /// Those a client sends, as tensors named after them: each with its dtype and shape, the
  /// examples first ([-1] for one value per example, [-1, N] for N, [-1, -1] when it varies), as
  /// the training records held them. Empty when not known (a model exported before kiln noted
  /// them).
  virtual const std::map<std::string, TensorSpec>& raw_inputs() const = 0;
  /// The inputs for `examples`; ServingError (kInvalidArgument) naming the example and the
  /// feature a column refuses (a string in a numeric column, a missing feature it needs).
  virtual HostTensors encode(const std::vector<io::Features>& examples) const = 0;
};

/// The error a request whose client has gone is answered with (an answer no one reads, but
/// counted in the metrics).
inline std::exception_ptr client_gone_error() {
  return std::make_exception_ptr(ServingError(StatusCode::kCancelled, "the client has gone"));
}

class Servable {
 public:
  virtual ~Servable() = default;
  virtual const Signatures& signatures() const = 0;
  /// The encoder of a model that reads raw features; null for one that reads tensors.
  virtual const ExampleEncoder* examples() const { return nullptr; }
  /// The name of each class, by class id; empty when the training data named none.
  virtual const std::vector<std::string>& labels() const {
    static const std::vector<std::string> none;
    return none;
  }
  /// The outputs of `signature` (one of signatures()) for `inputs`, already checked against it.
  virtual std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) = 0;
  /// predict() with its answer given to `done` once, never thrown: by default on this thread
  /// before returning, by a servable that queues requests (serving/batcher.h) later on its own.
  /// A request whose client has gone (`abandoned` set) before it runs is answered kCancelled
  /// without running.
  virtual void predict_async(const std::string& signature, HostTensors inputs, PredictDone done,
                             net::Abandoned abandoned) {
    if (net::is_abandoned(abandoned)) return done({}, client_gone_error());
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
