// multi_head: one backbone, several named heads on its output, each with its own loss, loss
// weight, metrics and target (the templates' multi-output networks): e.g. a classifier and a
// decoder that reconstructs the input, trained together on the weighted sum of their losses.

#include <algorithm>
#include <cctype>
#include <set>

#include "kiln/models/model.h"

namespace kiln::models {
namespace {

struct HeadOptions {
  std::string name;
  LayerList layers;
  ComponentSpec loss{"loss"};
  double weight = 1.0;
  ComponentList metrics{"metric"};
  std::string target = "target";
  void describe(Schema& s) {
    s.field("name", name, "The head's output name; its values are logged as split/NAME/...")
        .check(
            [](const std::string& n) {
              bool plain = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
              });
              return plain && n != "loss";
            },
            "of letters, digits, '_' and '-', other than \"loss\"")
        .require();
    s.field("layers", layers, "The head's layers, on the backbone's output.")
        .check([](const LayerList& list) { return !list.items.empty(); }, "with at least one layer")
        .require();
    s.field("loss", loss, "The head's loss.").require();
    s.field("weight", weight, "Factor of this head's loss in the sum that training minimises.")
        .min(0);
    s.field("metrics", metrics, "Measured on this head's output at every evaluation.");
    s.field("target", target,
            "What the head's output is compared with: target (the data's target), input (the "
            "input itself, for reconstruction) or the name of one of the data's `targets`.");
  }
};

struct MultiHeadOptions {
  LayerList backbone;
  std::vector<HeadOptions> heads;
  std::map<std::string, LayerList> blocks;
  void describe(Schema& s) {
    s.field("backbone", backbone, "The shared layers, in order.")
        .check([](const LayerList& list) { return !list.items.empty(); }, "with at least one layer")
        .require();
    s.field("heads", heads, "The heads, the main one first (the model's output for export).")
        .check(
            [](const std::vector<HeadOptions>& heads) {
              std::set<std::string> names;
              for (const auto& head : heads) names.insert(head.name);
              return !heads.empty() && names.size() == heads.size();
            },
            "with at least one head and no name twice")
        .require();
    s.field("blocks", blocks,
            "Named lists of layers used in the backbone or heads as {type: block, name: NAME}.");
  }
};

class MultiHead : public Model {
 public:
  MultiHead(const MultiHeadOptions& options, const Inputs& input) {
    BuildScope scope;
    scope.blocks = &options.blocks;
    scope.row_parts = &input.layout;
    BuiltStack backbone = build_stack(options.backbone, input, scope);
    if (!backbone.modules->is_empty()) scope.row_parts = nullptr;  // the heads get features
    backbone_ = register_module("backbone", backbone.modules);
    auto heads = std::make_shared<torch::nn::Module>();
    for (const HeadOptions& head : options.heads) {
      BuiltStack built = build_stack(head.layers, backbone.output, scope);
      heads_.push_back(heads->register_module(head.name, built.modules));
      shapes_.push_back(built.output);
      specs_.push_back({head.name, head.loss, head.weight, head.metrics, head.target});
    }
    register_module("heads", heads);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    return call(heads_.front(), call(backbone_, input));
  }
  NamedOutputs forward_named(const torch::Tensor& input) override {
    torch::Tensor features = call(backbone_, input);
    NamedOutputs outputs;
    for (size_t i = 0; i < heads_.size(); ++i)
      outputs.insert(specs_[i].name, call(heads_[i], features));
    return outputs;
  }
  Shape output_shape() const override { return shapes_.front(); }
  std::string output_name() const override { return specs_.front().name; }
  std::vector<HeadSpec> heads() const override { return specs_; }

 private:
  LayerStack backbone_{nullptr};
  std::vector<LayerStack> heads_;
  std::vector<Shape> shapes_;
  std::vector<HeadSpec> specs_;
};

}  // namespace

KILN_REGISTER(model_registry, "multi_head", MultiHead, MultiHeadOptions,
              "A shared backbone with several named heads, each with its own loss, weight, "
              "metrics and target.");

}  // namespace kiln::models
