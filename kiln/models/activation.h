#pragma once
// The activation functions a network chooses by name (mlp, autoencoder, lenet5, the feed-forward
// network of transformer_encoder; those built for some of them say which with Field::only). Each
// name is also a layer type, so a network built from a layer list puts enum_name(activation) in
// it.
// Thread-safety: values.

#include "kiln/core/schema.h"

namespace kiln::models {

enum class Activation { kRelu, kGelu, kSilu, kTanh, kSigmoid, kElu, kLeakyRelu };
inline EnumNameList<Activation> enum_names(Activation) {
  return {{Activation::kRelu, "relu"},           {Activation::kGelu, "gelu"},
          {Activation::kSilu, "silu"},           {Activation::kTanh, "tanh"},
          {Activation::kSigmoid, "sigmoid"},     {Activation::kElu, "elu"},
          {Activation::kLeakyRelu, "leaky_relu"}};
}

}  // namespace kiln::models
