#pragma once
// The activation functions a network chooses by name (mlp, autoencoder, lenet5, the feed-forward
// network of transformer_encoder). Each name is also a layer type, so a network built from a
// layer list puts enum_name(activation) in it.
// Thread-safety: values.

#include <algorithm>
#include <string>
#include <vector>

#include "kiln/core/schema.h"

namespace kiln::models {

enum class Activation { kRelu, kGelu, kSilu, kTanh, kSigmoid, kElu, kLeakyRelu };
inline EnumNameList<Activation> enum_names(Activation) {
  return {{Activation::kRelu, "relu"},           {Activation::kGelu, "gelu"},
          {Activation::kSilu, "silu"},           {Activation::kTanh, "tanh"},
          {Activation::kSigmoid, "sigmoid"},     {Activation::kElu, "elu"},
          {Activation::kLeakyRelu, "leaky_relu"}};
}

/// Restricts `field` to the activations a network is built for, named in the error in the order
/// given: `expected string one of "tanh", "relu", got "gelu"`.
inline void allow_activations(Field<Activation>& field, std::vector<Activation> allowed) {
  std::string names;
  for (Activation a : allowed) names += (names.empty() ? "\"" : ", \"") + enum_name(a) + "\"";
  field.check(
      [allowed](const Activation& a) {
        return std::find(allowed.begin(), allowed.end(), a) != allowed.end();
      },
      "one of " + names);
}

}  // namespace kiln::models
