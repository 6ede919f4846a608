#pragma once
// Models built from config text, and the shape a real forward pass gives, for the model tests.

#include <memory>
#include <string>

#include "kiln/models/model.h"
#include "tests/support/components.h"

namespace kiln::testing {

/// A `sequential` model from the inside of its braces: "layers: [...]" (and "blocks: {...}").
inline std::shared_ptr<models::Model> build_sequential(const std::string& body,
                                                       const models::Shape& input) {
  return models::build_model(read_spec("model", "{type: sequential, " + body + "}"), input);
}

/// The shape of one example of a real forward pass over a batch of two, in eval mode.
inline models::Shape forward_shape(models::Model& model, const models::Shape& input) {
  models::Shape batch = input;
  batch.insert(batch.begin(), 2);
  model.eval();
  torch::NoGradGuard no_grad;
  // Keep the output alive: sizes() points into it.
  torch::Tensor output = model.forward(torch::randn(batch));
  auto sizes = output.sizes();
  return {sizes.begin() + 1, sizes.end()};
}

}  // namespace kiln::testing
