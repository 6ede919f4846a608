#include "kiln/models/embedding_layer.h"

#include <fmt/format.h>

#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/suggest.h"
#include "kiln/models/observe.h"

namespace kiln::models {

EmbeddingLayer::EmbeddingLayer(const Model& model, const std::string& layer,
                               const std::string& config_path) {
  std::vector<std::string> names;
  // The other heads of a multi_head model run after the main one: their layers must not take
  // the place of its last.
  std::string main_head = model.heads().empty() ? "" : "heads." + model.heads().front().name + ".";
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    names.push_back(item.key());
    bool other_head = !main_head.empty() && item.key().rfind("heads.", 0) == 0 &&
                      item.key().rfind(main_head, 0) != 0;
    if (item.value()->children().empty() && !other_head) leaves_.insert(item.value().get());
    if (item.key() == layer) layer_ = item.value().get();
  }
  if (!layer.empty() && !layer_)
    throw ConfigError(
        config_path, "",
        fmt::format("the model has no layer \"{}\"; {}", layer, suggestion_text(layer, names)));
}

torch::Tensor EmbeddingLayer::pick(const torch::nn::Module& module, const torch::Tensor& input,
                                   const torch::Tensor& output) const {
  if (layer_) return &module == layer_ ? output : torch::Tensor();
  return leaves_.count(&module) > 0 ? input : torch::Tensor();
}

torch::Tensor embed(Model& model, const EmbeddingLayer& layer, const torch::Tensor& input) {
  torch::Tensor embedding;
  CallWatcher watcher(
      [&](const torch::nn::Module& module, const torch::Tensor& in, const torch::Tensor& out) {
        torch::Tensor picked = layer.pick(module, in, out);
        if (picked.defined()) embedding = picked;
      });
  model.forward(input);
  return embedding;
}

}  // namespace kiln::models
