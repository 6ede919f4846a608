// dnn: a feed-forward network over a tabular input row (tf.estimator's DNNClassifier and
// DNNRegressor): plain numbers and embedded categories concatenated, then hidden layers.

#include "kiln/models/networks/classifier.h"
#include "kiln/models/networks/row_features.h"

namespace kiln::models {
namespace {

struct DnnOptions {
  int64_t num_classes = 1;
  std::string input;
  PerceptronLayers layers{{128, 64}};
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Outputs: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("input", input, "The named input it reads (data inputs: {...}); \"\": the whole row.");
    describe_perceptron(s, layers);
  }
};

class Dnn : public Classifier {
 public:
  Dnn(const DnnOptions& o, const Inputs& input)
      : Classifier(o.num_classes),
        deep_(register_module("deep", RowPerceptron(row_part(input, o.input, "input"), o.layers,
                                                    o.num_classes, "input"))) {}
  torch::Tensor forward(const torch::Tensor& input) override { return deep_->forward(input); }

 private:
  RowPerceptron deep_;
};

}  // namespace

KILN_REGISTER(model_registry, "dnn", Dnn, DnnOptions,
              "A feed-forward network over tabular inputs, categories embedded "
              "(DNNClassifier).");

}  // namespace kiln::models
