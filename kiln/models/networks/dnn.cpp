// dnn: a feed-forward network over a tabular input row (tf.estimator's DNNClassifier and
// DNNRegressor): plain numbers and embedded categories concatenated, then hidden layers.

#include "kiln/models/networks/layer_network.h"
#include "kiln/models/networks/row_features.h"

namespace kiln::models {
namespace {

struct DnnOptions {
  int64_t num_classes = 1;
  std::string input;
  std::vector<int64_t> hidden{128, 64};
  Activation activation = Activation::kRelu;
  double dropout = 0.0;
  bool batchnorm = false;
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Outputs: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("input", input, "The named input it reads (data inputs: {...}); \"\": the whole row.");
    s.field("hidden", hidden, "Widths of the hidden layers, in order.").each_min(1);
    s.field("activation", activation, "After each hidden layer.");
    s.field("dropout", dropout, "Dropout after each hidden activation; 0 for none.").in_range(0, 1);
    s.field("batchnorm", batchnorm, "Batch normalisation before each hidden activation.");
  }
};

class Dnn : public Model {
 public:
  Dnn(const DnnOptions& o, const Inputs& input) : out_(o.num_classes) {
    RowPart part = row_part(input, o.input, "input");
    features_ = register_module("features", RowFeatures(part, [](const auto& index) {
                                  return embedding_width(index, "input");
                                }));
    auto layers = make_layer_list(
        perceptron_layers({o.hidden, o.activation, o.dropout, o.batchnorm}, o.num_classes),
        "model");
    layers_ =
        register_module("layers", build_stack(layers, {features_->width()}, BuildScope{}).modules);
  }
  torch::Tensor forward(const torch::Tensor& input) override {
    return layers_->forward(features_->forward(input));
  }
  Shape output_shape() const override { return {out_}; }
  std::string output_name() const override { return "logits"; }

 private:
  RowFeatures features_{nullptr};
  LayerStack layers_{nullptr};
  int64_t out_;
};

}  // namespace

KILN_REGISTER(model_registry, "dnn", Dnn, DnnOptions,
              "A feed-forward network over tabular inputs, categories embedded "
              "(DNNClassifier).");

}  // namespace kiln::models
