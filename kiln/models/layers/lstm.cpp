// lstm: a recurrent layer over [steps, features] sequences.

#include "kiln/models/layers/recurrent.h"

namespace kiln::models {
namespace {

class Lstm : public Layer {
 public:
  explicit Lstm(const RecurrentOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    return build_recurrent(input, o_, RecurrentCell::kLstm);
  }

 private:
  RecurrentOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "lstm", Lstm, RecurrentOptions,
              "Long short-term memory (Hochreiter and Schmidhuber, 1997) over [steps, features]; "
              "the last state or every step.");

}  // namespace kiln::models
