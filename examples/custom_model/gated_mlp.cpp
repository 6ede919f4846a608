// gated_mlp: a network of your own, written with LibTorch modules. The options struct declares
// its config keys (type, default, check, doc), the class builds itself for the shape of one
// example, and one KILN_REGISTER line makes `model: {type: gated_mlp}` work in any config.

#include <kiln/models/model.h>

namespace custom {

struct GatedMlpOptions {
  int64_t num_classes = 10;
  int64_t hidden = 64;
  void describe(kiln::Schema& s) {
    s.field("num_classes", num_classes, "Classes to predict.").min(1).require();
    s.field("hidden", hidden, "Width of the gated hidden layer.").min(1);
  }
};

// A gated linear unit over the flattened input, then a linear classifier:
// logits = out(value(x) * sigmoid(gate(x))).
class GatedMlp : public kiln::models::Model {
 public:
  GatedMlp(const GatedMlpOptions& options, const kiln::models::Shape& input)
      : classes_(options.num_classes) {
    int64_t features = kiln::models::element_count(input);
    value_ = register_module("value", torch::nn::Linear(features, options.hidden));
    gate_ = register_module("gate", torch::nn::Linear(features, options.hidden));
    out_ = register_module("out", torch::nn::Linear(options.hidden, options.num_classes));
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = input.flatten(1);
    return out_(value_(x) * torch::sigmoid(gate_(x)));
  }
  kiln::models::Shape output_shape() const override { return {classes_}; }
  std::string output_name() const override { return "logits"; }

 private:
  int64_t classes_;
  torch::nn::Linear value_{nullptr}, gate_{nullptr}, out_{nullptr};
};

}  // namespace custom

KILN_REGISTER(kiln::models::model_registry, "gated_mlp", custom::GatedMlp, custom::GatedMlpOptions,
              "Example plugin network: a gated linear unit over the flattened input, then a "
              "linear classifier.");
