// wide_deep: tf.estimator's DNNLinearCombinedClassifier and Regressor: a linear model over the
// wide input (sparse categories and their crosses, memorising) plus a feed-forward network over
// the deep input (numbers and embedded categories, generalising), their logits summed. One
// optimizer trains both parts (the estimator gives each its own).

#include "kiln/models/networks/layer_network.h"
#include "kiln/models/networks/row_features.h"

namespace kiln::models {
namespace {

struct WideDeepOptions {
  int64_t num_classes = 1;
  std::string wide = "wide";
  std::string deep = "deep";
  std::vector<int64_t> hidden{128, 64};
  Activation activation = Activation::kRelu;
  double dropout = 0.0;
  bool batchnorm = false;
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Outputs: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("wide", wide, "The named input of the linear part (data inputs: {...}).");
    s.field("deep", deep, "The named input of the feed-forward part.");
    s.field("hidden", hidden, "Widths of the deep part's hidden layers, in order.").each_min(1);
    s.field("activation", activation, "After each hidden layer.");
    s.field("dropout", dropout, "Dropout after each hidden activation; 0 for none.").in_range(0, 1);
    s.field("batchnorm", batchnorm, "Batch normalisation before each hidden activation.");
  }
};

class WideDeep : public Model {
 public:
  WideDeep(const WideDeepOptions& o, const Inputs& input) : out_(o.num_classes) {
    wide_ = register_module("wide", RowLinear(row_part(input, o.wide, "wide"), o.num_classes));
    features_ = register_module("deep_features",
                                RowFeatures(row_part(input, o.deep, "deep"), [](const auto& index) {
                                  return embedding_width(index, "deep");
                                }));
    auto layers = make_layer_list(
        perceptron_layers({o.hidden, o.activation, o.dropout, o.batchnorm}, o.num_classes),
        "model");
    deep_ =
        register_module("deep", build_stack(layers, {features_->width()}, BuildScope{}).modules);
  }
  torch::Tensor forward(const torch::Tensor& input) override {
    return wide_->forward(input) + deep_->forward(features_->forward(input));
  }
  Shape output_shape() const override { return {out_}; }
  std::string output_name() const override { return "logits"; }

 private:
  RowLinear wide_{nullptr};
  RowFeatures features_{nullptr};
  LayerStack deep_{nullptr};
  int64_t out_;
};

}  // namespace

KILN_REGISTER(model_registry, "wide_deep", WideDeep, WideDeepOptions,
              "A linear model over the wide input plus a feed-forward network over the deep "
              "input, logits summed (DNNLinearCombinedClassifier).");

}  // namespace kiln::models
