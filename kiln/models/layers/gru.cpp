// gru: a recurrent layer over [steps, features] sequences.

#include "kiln/models/layers/recurrent.h"

namespace kiln::models {
namespace {

class Gru : public Layer {
 public:
  explicit Gru(const RecurrentOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    return build_recurrent(input, o_, RecurrentCell::kGru);
  }

 private:
  RecurrentOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "gru", Gru, RecurrentOptions,
              "Gated recurrent unit (Cho et al., 2014) over [steps, features]; the last state or "
              "every step.");

}  // namespace kiln::models
