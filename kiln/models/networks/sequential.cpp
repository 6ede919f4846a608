// sequential: layers applied in order, each built for the shape the previous one produces; blocks
// of layers defined once under `blocks` are used as `{type: block, name: NAME}`.

#include "kiln/models/networks/layer_network.h"

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

// The blocks and the input's named parts are only looked up while building.
BuildScope sequential_scope(const std::map<std::string, LayerList>& blocks, const Inputs& input) {
  BuildScope scope;
  scope.blocks = &blocks;
  scope.row_parts = &input.layout;
  return scope;
}

class Sequential : public LayerNetwork {
 public:
  Sequential(const SequentialOptions& options, const Inputs& input)
      : LayerNetwork(build_stack(options.layers, input, sequential_scope(options.blocks, input)),
                     "output") {}
};

}  // namespace

KILN_REGISTER(model_registry, "sequential", Sequential, SequentialOptions,
              "Layers applied one after another.");

}  // namespace kiln::models
