#include "kiln/models/layer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <numeric>

namespace kiln::models {

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t element_count(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

LayerRegistry& layer_registry() {
  static LayerRegistry registry("layer", "Layers of a sequential model; input sizes are inferred.");
  return registry;
}

torch::Tensor LayerStackImpl::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  for (auto& layer : *this) {
    observe_begin(*layer.ptr());
    torch::Tensor y = layer.forward<torch::Tensor>(x);
    observe(*layer.ptr(), x, y);
    x = std::move(y);
  }
  return x;
}

ComponentSpec make_layer_spec(const Json& layer, const std::string& path) {
  ComponentSpec spec("layer");
  spec.spec = layer_registry().resolve(layer, ReadContext{path, nullptr});
  spec.path = path;
  return spec;
}

LayerList make_layer_list(const std::vector<Json>& layers, const std::string& path) {
  LayerList list;
  for (const auto& layer : layers) list.items.push_back(make_layer_spec(layer, path));
  return list;
}

BuiltStack build_stack(const LayerList& layers, const Shape& input, const BuildScope& scope) {
  BuiltStack stack{LayerStack(), input};
  BuildScope after_first = scope;
  after_first.row_parts = nullptr;  // the first layer alone receives the row
  for (const auto& spec : layers.items) {
    BuiltLayer built;
    try {
      bool first = stack.modules->is_empty();
      built = layer_registry().create(spec)->build_in(stack.output, first ? scope : after_first);
    } catch (const ConfigError&) {
      throw;  // from a layer nested in this one: its path is already the precise one
    } catch (DataError& e) {
      e.add_context("at " + spec.path);  // past an allocation limit: the file is what to name
      throw;
    } catch (const Error& e) {
      throw ConfigError(spec.path, "", e.what());
    } catch (const c10::Error& e) {
      throw ConfigError(spec.path, "", e.what_without_backtrace());
    }
    stack.modules->push_back(std::move(built.module));
    stack.output = built.output;
  }
  return stack;
}

}  // namespace kiln::models
