#pragma once
// A servable for the serving tests, without torch: TensorFlow Serving's half_plus_two (y = x/2 +
// 2 over inputs of shape [-1, 1]), counting its calls and failing on request.

#include <atomic>
#include <map>
#include <string>

#include "kiln/serving/servable.h"

namespace kiln::testing {

class HalfPlusTwo : public serving::Servable {
 public:
  HalfPlusTwo() {
    serving::Signature signature;
    signature.inputs["x"] = {serving::DType::kFloat32, {-1, 1}};
    signature.outputs["y"] = {
        {serving::DType::kFloat32, {-1, 1}}, "", serving::OutputOp::kIdentity, ""};
    signatures_["serving_default"] = signature;
  }
  const serving::Signatures& signatures() const override { return signatures_; }
  std::map<std::string, serving::HostTensor> predict(
      const std::string&, const std::map<std::string, serving::HostTensor>& inputs) override {
    ++calls;
    serving::HostTensor y = inputs.at("x");
    for (double& value : y.numbers) value = value / 2 + 2;
    return {{"y", y}};
  }
  std::atomic<int> calls{0};

 private:
  serving::Signatures signatures_;
};

}  // namespace kiln::testing
