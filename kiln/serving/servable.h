#pragma once
// One loaded version of a served model, as the REST handler sees it: its signatures, and a
// predict that runs one of them on host tensors (batch dimension first) and gives its outputs.
// Torch-free: engine/exported_servable.h is the one over a kiln export; tests use fakes.
// Thread-safety: predict() may be called from several threads at once.

#include <map>
#include <string>

#include "kiln/serving/json_tensor.h"
#include "kiln/serving/signature.h"

namespace kiln::serving {

class Servable {
 public:
  virtual ~Servable() = default;
  virtual const Signatures& signatures() const = 0;
  /// The outputs of `signature` (one of signatures()) for `inputs`, already checked against it.
  virtual std::map<std::string, HostTensor> predict(
      const std::string& signature, const std::map<std::string, HostTensor>& inputs) = 0;
};

}  // namespace kiln::serving
