// linear: a linear model over a tabular input row (tf.estimator's LinearClassifier and
// LinearRegressor): a weight per plain number and per category of each index column, plus a bias.
// Over other data, a linear layer on the flattened example.

#include "kiln/models/networks/classifier.h"
#include "kiln/models/networks/row_features.h"

namespace kiln::models {
namespace {

struct LinearModelOptions {
  int64_t num_classes = 1;
  std::string input;
  void describe(Schema& s) {
    s.field("num_classes", num_classes,
            "Outputs: classes for a classifier, targets for a regression.")
        .min(1)
        .require();
    s.field("input", input, "The named input it reads (data inputs: {...}); \"\": the whole row.");
  }
};

class LinearModel : public Classifier {
 public:
  LinearModel(const LinearModelOptions& o, const Inputs& input)
      : Classifier(o.num_classes),
        linear_(register_module("linear",
                                RowLinear(row_part(input, o.input, "input"), o.num_classes))) {}
  torch::Tensor forward(const torch::Tensor& input) override { return linear_->forward(input); }

 private:
  RowLinear linear_;
};

}  // namespace

KILN_REGISTER(model_registry, "linear", LinearModel, LinearModelOptions,
              "A linear model over tabular inputs: a weight per number and per category "
              "(LinearClassifier).");

}  // namespace kiln::models
