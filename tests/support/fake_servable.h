#pragma once
// Servables for the serving tests, without torch: TensorFlow Serving's half_plus_two (y = x/2 +
// 2 over inputs of shape [-1, 1]), counting its calls; and one that reads raw features.

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "kiln/serving/servable.h"
#include "kiln/serving/serving_error.h"

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

namespace kiln::testing {

/// A servable that reads raw features, for :classify, :regress and :predict of examples: its
/// encoder writes the row [size, 1 if color is "red" else 0] (size is a number and required; a
/// missing color is 0); its metadata lists color (strings) and size (floats). `serving_default`
/// classifies into "small" and "large" with probabilities [1 - size/10, size/10]; `price` regresses
/// 2 * size + red.
class FeatureScorer : public serving::Servable {
 public:
  class Encoder : public serving::ExampleEncoder {
   public:
    const std::vector<std::string>& features() const override { return features_; }
    const std::map<std::string, serving::TensorSpec>& raw_inputs() const override {
      return raw_inputs_;
    }
    serving::HostTensors encode(const std::vector<io::Features>& examples) const override {
      serving::HostTensor rows{
          serving::DType::kFloat32, {static_cast<int64_t>(examples.size()), 2}, {}, {}};
      for (size_t i = 0; i < examples.size(); ++i) {
        auto size = examples[i].find("size");
        if (size == examples[i].end() || size->second.size() == 0)
          throw serving::ServingError(serving::StatusCode::kInvalidArgument,
                                      "example " + std::to_string(i) + ": no feature \"size\"");
        const io::Feature& given = size->second;
        auto color = examples[i].find("color");
        bool red = color != examples[i].end() && !color->second.bytes.empty() &&
                   color->second.bytes[0] == "red";
        rows.numbers.push_back(given.floats.empty() ? double(given.ints[0]) : given.floats[0]);
        rows.numbers.push_back(red ? 1 : 0);
      }
      return {{"input", rows}};
    }

   private:
    std::vector<std::string> features_{"color", "size"};
    std::map<std::string, serving::TensorSpec> raw_inputs_{
        {"color", {serving::DType::kString, {-1}}}, {"size", {serving::DType::kFloat32, {-1}}}};
  };

  FeatureScorer() {
    serving::Signature classifier;
    classifier.inputs["input"] = {serving::DType::kFloat32, {-1, 2}};
    classifier.outputs["probabilities"] = {
        {serving::DType::kFloat32, {-1, 2}}, "", serving::OutputOp::kSoftmax, ""};
    signatures_["serving_default"] = classifier;
    serving::Signature regressor;
    regressor.inputs["input"] = {serving::DType::kFloat32, {-1, 2}};
    regressor.outputs["predictions"] = {
        {serving::DType::kFloat32, {-1, 1}}, "", serving::OutputOp::kIdentity, ""};
    signatures_["price"] = regressor;
  }
  const serving::Signatures& signatures() const override { return signatures_; }
  const serving::ExampleEncoder* examples() const override { return &encoder_; }
  const std::vector<std::string>& labels() const override { return labels_; }
  std::map<std::string, serving::HostTensor> predict(
      const std::string& signature,
      const std::map<std::string, serving::HostTensor>& inputs) override {
    const serving::HostTensor& rows = inputs.at("input");
    int64_t count = rows.shape[0];
    serving::HostTensor out{
        serving::DType::kFloat32, {count, signature == "price" ? 1 : 2}, {}, {}};
    for (int64_t i = 0; i < count; ++i) {
      double size = rows.numbers[2 * i], red = rows.numbers[2 * i + 1];
      if (signature == "price") {
        out.numbers.push_back(2 * size + red);
      } else {
        out.numbers.push_back(1 - size / 10);
        out.numbers.push_back(size / 10);
      }
    }
    return {{signature == "price" ? "predictions" : "probabilities", out}};
  }

 private:
  serving::Signatures signatures_;
  Encoder encoder_;
  std::vector<std::string> labels_{"small", "large"};
};

}  // namespace kiln::testing
