// sequential: layers applied in order, each built for the shape the previous one produces; blocks
// of layers defined once under `blocks` are used as `{type: block, name: NAME}`.

#include "kiln/models/model.h"

namespace kiln::models {
namespace {

struct SequentialOptions {
  LayerList layers;
  std::map<std::string, LayerList> blocks;
  void describe(Schema& s) {
    s.field("layers", layers, "The layers, in order; each infers its input size.")
        .check([](const LayerList& list) { return !list.items.empty(); }, "with at least one layer")
        .require();
    s.field("blocks", blocks,
            "Named lists of layers, defined once and used in `layers` (or inside other blocks) as "
            "{type: block, name: NAME}.");
  }
};

class Sequential : public Model {
 public:
  Sequential(const SequentialOptions& options, const Shape& input) : blocks_(options.blocks) {
    BuildScope scope;
    scope.blocks = &blocks_;
    BuiltStack stack = build_stack(options.layers, input, scope);
    layers_ = register_module("layers", stack.modules);
    output_ = stack.output;
  }

  torch::Tensor forward(const torch::Tensor& input) override { return call(layers_, input); }
  Shape output_shape() const override { return output_; }

 private:
  std::map<std::string, LayerList> blocks_;
  LayerStack layers_;
  Shape output_;
};

}  // namespace

KILN_REGISTER(model_registry, "sequential", Sequential, SequentialOptions,
              "Layers applied one after another.");

}  // namespace kiln::models
