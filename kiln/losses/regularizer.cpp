#include "kiln/losses/regularizer.h"

namespace kiln::losses {

void RegularizerOptions::describe(Schema& s) {
  s.field("weight", weight, "What the penalty is multiplied by before it joins the loss.")
      .check([](double w) { return w > 0; }, "> 0")
      .require();
  s.field("params", params,
          "Which trainable parameters, by name pattern (`*` for any run of characters: "
          "`layers.*`, `*.weight`); see `kiln model summary` for the names.")
      .check([](const std::vector<std::string>& p) { return !p.empty(); },
             "with at least one pattern");
  s.field("vectors", vectors,
          "Also penalise 1-D parameters (biases, normalisation scales), which are left out "
          "otherwise.");
}

RegularizerRegistry& regularizer_registry() {
  static RegularizerRegistry registry("regularizer",
                                      "Penalties on the parameters, added to the training loss.");
  return registry;
}

}  // namespace kiln::losses
