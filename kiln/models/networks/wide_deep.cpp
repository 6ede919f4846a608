// wide_deep: tf.estimator's DNNLinearCombinedClassifier and Regressor: a linear model over the
// wide input (sparse categories and their crosses, memorising) plus a feed-forward network over
// the deep input (numbers and embedded categories, generalising), their logits summed. One
// optimizer trains both parts (the estimator gives each its own).

#include "kiln/models/networks/classifier.h"
#include "kiln/models/networks/row_features.h"

namespace kiln::models {
namespace {

struct WideDeepOptions {
  int64_t num_classes = 1;
  std::string wide = "wide";
  std::string deep = "deep";
  PerceptronLayers layers{{128, 64}};
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Outputs: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("wide", wide, "The named input of the linear part (data inputs: {...}).");
    s.field("deep", deep, "The named input of the feed-forward part.");
    describe_perceptron(s, layers);
  }
};

class WideDeep : public Classifier {
 public:
  WideDeep(const WideDeepOptions& o, const Inputs& input)
      : Classifier(o.num_classes),
        wide_(register_module("wide", RowLinear(row_part(input, o.wide, "wide"), o.num_classes))),
        deep_(register_module("deep", RowPerceptron(row_part(input, o.deep, "deep"), o.layers,
                                                    o.num_classes, "deep"))) {}
  torch::Tensor forward(const torch::Tensor& input) override {
    return wide_->forward(input) + deep_->forward(input);
  }

 private:
  RowLinear wide_;
  RowPerceptron deep_;
};

}  // namespace

KILN_REGISTER(model_registry, "wide_deep", WideDeep, WideDeepOptions,
              "A linear model over the wide input plus a feed-forward network over the deep "
              "input, logits summed (DNNLinearCombinedClassifier).");

}  // namespace kiln::models
