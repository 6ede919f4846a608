#pragma once
// The base of zoo networks whose main output is `logits`, [num_classes]: the convolutional ones
// (conv_parts.h) and the tabular ones (linear, dnn, wide_deep).

#include "kiln/models/model.h"

namespace kiln::models {

/// A network whose main output is `logits`, [num_classes].
class Classifier : public Model {
 public:
  explicit Classifier(int64_t num_classes) : num_classes_(num_classes) {}
  Shape output_shape() const override { return {num_classes_}; }
  std::string output_name() const override { return "logits"; }

 private:
  int64_t num_classes_;
};

}  // namespace kiln::models
