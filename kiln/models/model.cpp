#include "kiln/models/model.h"

namespace kiln::models {

ModelRegistry& model_registry() {
  static ModelRegistry registry("model", "Whole networks, built for the shape of the data.");
  return registry;
}

NamedOutputs Model::forward_named(const torch::Tensor& input) {
  NamedOutputs outputs;
  outputs.insert(output_name(), forward(input));
  return outputs;
}

std::shared_ptr<Model> build_model(const ComponentSpec& spec, const Shape& input) {
  return std::shared_ptr<Model>(model_registry().create(spec, input).release());
}

}  // namespace kiln::models
