// distillation (Hinton, Vinyals and Dean, 2015): the model (the student) learns from the data's
// targets and from a frozen teacher's soft targets at once. A batch's loss is
//   alpha * L + (1 - alpha) * T^2 * KL(softmax(t / T) || softmax(s / T)),
// L the config's loss of the student's logits s, t the teacher's logits, T the temperature; the
// KL is the batch's mean over examples, and T^2 keeps its gradients' scale as T changes. The
// teacher is a kiln run (its folder or a checkpoint) or an export, trained on examples of the same
// shape and classes: it sees the student's batches as they are, transforms included. train/loss
// stays L, comparable with the student trained alone; the loop logs the KL term and the blend.

#include <fmt/format.h>

#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"
#include "kiln/models/layer.h"

namespace kiln::loops {
namespace {

using engine::DeviceSum;
using engine::FrozenModel;
using engine::Loop;
using engine::LoopSetup;
using engine::MetricValues;
using engine::Objective;

struct DistillationOptions {
  std::string teacher;
  std::string checkpoint = "best";
  double alpha = 0.5;
  double temperature = 4.0;
  void describe(Schema& s) {
    // Required, but checked when the loop is built: a config without it still reads (kiln
    // model summary of an example that leaves the teacher to --set).
    s.field("teacher", teacher,
            "The teacher (required): a run folder, one of its checkpoints, or an export (a "
            "version folder, or a model's folder: its newest version).");
    s.field("checkpoint", checkpoint,
            "The teacher run's checkpoint: best, last or a checkpoint's folder name.");
    s.field("alpha", alpha, "The weight of the data's loss; the soft targets get 1 - alpha.")
        .check([](double a) { return a >= 0 && a <= 1; }, "in [0, 1]");
    s.field("temperature", temperature, "T: how much both softmaxes are softened.")
        .check([](double t) { return t > 0 && t <= 1000; }, "in (0, 1000]");
  }
};

class Distillation : public Loop {
 public:
  explicit Distillation(const DistillationOptions& o) : options_(o) {}

  void attach(const LoopSetup& setup) override {
    std::string at = config_path + ".teacher";
    if (options_.teacher.empty())
      throw ConfigError(at, "",
                        "no teacher: give the folder of a trained run "
                        "(--set loop.teacher=runs/NAME/TIMESTAMP)");
    engine::require_class_logits(setup.model, config_path, type);
    models::Shape out = setup.model.output_shape();
    FrozenModel teacher = setup.open_frozen(options_.teacher, options_.checkpoint, at);
    if (teacher.input_shape != setup.input_shape)
      throw ConfigError(at, "",
                        fmt::format("the teacher takes examples of shape {}, the training data's "
                                    "are {}",
                                    models::shape_text(teacher.input_shape),
                                    models::shape_text(setup.input_shape)));
    if (teacher.model->output_shape() != out)
      throw ConfigError(
          at, "",
          fmt::format("the teacher gives {} logits, the model {}",
                      models::shape_text(teacher.model->output_shape()), models::shape_text(out)));
    teacher_ = teacher.model;
  }

  torch::Tensor batch_loss(models::Model& model, Objective& objective,
                           const data::Batch& batch) override {
    models::NamedOutputs outputs;
    torch::Tensor hard = objective.compute(model, batch, &outputs);
    torch::Tensor teacher_logits;
    {
      torch::NoGradGuard no_grad;
      teacher_logits = teacher_->forward(batch.input);
    }
    // In float32 whatever the autocast: softmaxes of scaled logits lose most in bfloat16.
    double t = options_.temperature;
    torch::Tensor student = torch::log_softmax(outputs[""].to(torch::kFloat) / t, 1);
    torch::Tensor target = torch::log_softmax(teacher_logits.to(torch::kFloat) / t, 1);
    torch::Tensor kl = torch::kl_div(student, target, at::Reduction::Sum, /*log_target=*/true) /
                       double(batch.size());
    torch::Tensor soft = kl * (t * t);
    torch::Tensor loss = options_.alpha * hard + (1 - options_.alpha) * soft;
    soft_sum_.add(soft.detach());
    loss_sum_.add(loss.detach());
    batches_ += 1;
    return loss;
  }

  MetricValues take_values(distributed::Context& context) override {
    std::vector<double> sums = {soft_sum_.take(), loss_sum_.take(), double(batches_)};
    context.all_reduce(sums, distributed::ReduceOp::kSum);
    batches_ = 0;
    if (sums[2] == 0) return {};
    return {{"train/distillation/soft_loss", sums[0] / sums[2]},
            {"train/distillation/loss", sums[1] / sums[2]}};
  }

  std::vector<std::string> tags() const override {
    return {"train/distillation/soft_loss", "train/distillation/loss"};
  }

 private:
  DistillationOptions options_;
  std::shared_ptr<models::Model> teacher_;
  DeviceSum soft_sum_, loss_sum_;
  int64_t batches_ = 0;
};

}  // namespace

KILN_REGISTER(engine::loop_registry, "distillation", Distillation, DistillationOptions,
              "The model learns from the data and from a frozen teacher run's soft targets: "
              "alpha * loss + (1 - alpha) * T^2 * KL(teacher || model).");

}  // namespace kiln::loops
