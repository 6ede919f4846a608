// sequential: layers applied in order, each built for the shape the previous one produces.

#include "kiln/models/model.h"

namespace kiln::models {
namespace {

struct SequentialOptions {
  ComponentList layers{"layer"};
  void describe(Schema& s) {
    s.field("layers", layers, "The layers, in order; each infers its input size.")
        .check([](const ComponentList& list) { return !list.items.empty(); },
               "with at least one layer")
        .require();
  }
};

class Sequential : public Model {
 public:
  Sequential(const SequentialOptions& options, const Shape& input) : output_(input) {
    for (const auto& spec : options.layers.items) {
      BuiltLayer built;
      try {
        built = layer_registry().create(spec)->build(output_);
      } catch (const ConfigError&) {
        throw;
      } catch (const Error& e) {
        throw ConfigError(spec.path, "", e.what());
      } catch (const c10::Error& e) {
        throw ConfigError(spec.path, "", e.what_without_backtrace());
      }
      layers_->push_back(std::move(built.module));
      output_ = built.output;
    }
    register_module("layers", layers_);
  }

  torch::Tensor forward(const torch::Tensor& input) override { return layers_->forward(input); }
  Shape output_shape() const override { return output_; }

 private:
  torch::nn::Sequential layers_;
  Shape output_;
};

}  // namespace

KILN_REGISTER(model_registry, "sequential", Sequential, SequentialOptions,
              "Layers applied one after another.");

}  // namespace kiln::models
