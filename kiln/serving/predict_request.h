#pragma once
// A predict request as the serving API takes it, read from either protocol: the signature, the
// form the answer takes (TensorFlow Serving's row or columnar JSON), and each input's values.
// Thread-safety: values.

#include <functional>
#include <map>
#include <string>

#include "kiln/serving/tensor.h"

namespace kiln::serving {

enum class RequestFormat { kRow, kColumnar };

struct PredictRequest {
  std::string signature_name = "serving_default";
  RequestFormat format = RequestFormat::kRow;
  std::map<std::string, HostTensor> inputs;
};

/// The inputs of the signature a request names (it throws ServingError for one the model lacks).
using SignatureInputs =
    std::function<const std::map<std::string, TensorSpec>&(const std::string& signature_name)>;

}  // namespace kiln::serving
