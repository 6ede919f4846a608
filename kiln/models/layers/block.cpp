// block: a named list of layers the model defines once under `blocks`, used here by name, possibly
// repeated. Each use has its own weights.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "kiln/core/suggest.h"
#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct BlockOptions {
  std::string name;
  int64_t repeat = 1;
  void describe(Schema& s) {
    s.field("name", name, "The block, as defined under the model's `blocks`.").require();
    s.field("repeat", repeat, "Copies applied one after another, each with its own weights.")
        .min(1);
  }
};

class Block : public Layer {
 public:
  explicit Block(const BlockOptions& options) : options_(options) {}

  BuiltLayer build(const Shape& input) const override { return build_in(input, BuildScope{}); }

  BuiltLayer build_in(const Shape& input, const BuildScope& scope) const override {
    const LayerList& layers = definition(scope);
    BuildScope inner = scope;
    inner.expanding.push_back(options_.name);
    if (options_.repeat == 1) {
      BuiltStack stack = build_stack(layers, input, inner);
      return {torch::nn::AnyModule(stack.modules), stack.output};
    }
    // Copies are numbered: parameters read `<layer>.<copy>.<index in the block>.weight`.
    LayerStack copies;
    Shape shape = input;
    for (int64_t i = 0; i < options_.repeat; ++i) {
      BuiltStack stack = build_stack(layers, shape, inner);
      copies->push_back(stack.modules);
      shape = stack.output;
    }
    return {torch::nn::AnyModule(copies), shape};
  }

 private:
  const LayerList& definition(const BuildScope& scope) const {
    std::vector<std::string> known;
    if (scope.blocks)
      for (const auto& [name, layers] : *scope.blocks) known.push_back(name);
    KILN_CHECK(std::count(known.begin(), known.end(), options_.name) == 1,
               "no block \"{}\" is defined under the model's blocks; {}", options_.name,
               known.empty() ? std::string("none are") : suggestion_text(options_.name, known));
    const auto& expanding = scope.expanding;
    KILN_CHECK(std::find(expanding.begin(), expanding.end(), options_.name) == expanding.end(),
               "block \"{}\" contains itself (through {} -> {})", options_.name,
               fmt::join(expanding, " -> "), options_.name);
    return scope.blocks->at(options_.name);
  }

  BlockOptions options_;
};

}  // namespace

KILN_REGISTER(layer_registry, "block", Block, BlockOptions,
              "A named block of layers defined under the model's `blocks`, optionally repeated.");

}  // namespace kiln::models
