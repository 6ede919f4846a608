// mean_teacher (Tarvainen and Valpola, 2017): semi-supervised learning from a few labelled
// examples and many unlabelled ones (data.labels_per_class). The model trains as the student;
// its teacher is an exponential moving average of the student's weights after every update,
//   teacher = a * teacher + (1 - a) * student,  a = min(1 - 1 / (n + 1), ema_decay)
// after n updates. Each batch is seen twice, each view with its own Gaussian noise (`noise`, on
// top of the data's augmentation); the loss is
//   L(labelled rows) * labelled / rows + w(n) * mean((softmax(s) - softmax(t))^2)
// with L the config's loss of the student's logits s on the labelled rows (so an unlabelled row
// adds nothing to it, as the paper's code divides by the whole batch), t the teacher's logits on
// the other view (no gradient), and the consistency weight ramped up over `rampup_steps`,
// w(n) = consistency * exp(-5 (1 - n / rampup_steps)^2). The teacher is what validation, eval
// and export use (its weights are the checkpoint's ema.safetensors); the student is validated
// too, as val/student/....

#include <fmt/format.h>

#include <cmath>

#include "kiln/data/partly_labelled.h"
#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"

namespace kiln::loops {
namespace {

using engine::DeviceSum;
using engine::Loop;
using engine::LoopSetup;
using engine::MetricValues;
using engine::NamedTensors;
using engine::Objective;

struct MeanTeacherOptions {
  double ema_decay = 0.99;
  double consistency = 100.0;
  int64_t rampup_steps = 2000;
  double noise = 0.15;
  void describe(Schema& s) {
    s.field("ema_decay", ema_decay, "How much of the teacher each update keeps.")
        .check([](double d) { return d > 0 && d < 1; }, "in (0, 1)");
    s.field("consistency", consistency,
            "The weight of the consistency cost (the mean squared difference of the two "
            "softmaxes) once ramped up.")
        .check([](double c) { return c >= 0 && c <= 1e6; }, "in [0, 1e6]");
    s.field("rampup_steps", rampup_steps,
            "Steps over which the consistency weight rises as exp(-5 (1 - t)^2); 0: at once.")
        .min(0);
    s.field("noise", noise,
            "The standard deviation of the Gaussian noise added to each view's inputs.")
        .check([](double n) { return n >= 0 && n <= 100; }, "in [0, 100]");
  }
};

class MeanTeacher : public Loop {
 public:
  explicit MeanTeacher(const MeanTeacherOptions& o) : options_(o) {}

  void attach(const LoopSetup& setup) override {
    engine::require_class_logits(setup.model, config_path, type);
    teacher_ = setup.build_model();
    teacher_->train();  // as the student: dropout and batch statistics, no gradients
    for (torch::Tensor& parameter : teacher_->parameters()) parameter.set_requires_grad(false);
    state_ = engine::named_state(*teacher_);
    copy_weights(engine::named_state(setup.model));
  }

  torch::Tensor batch_loss(models::Model& model, Objective& objective,
                           const data::Batch& batch) override {
    models::NamedOutputs outputs = objective.forward(model, with_noise(batch.input));
    torch::Tensor teacher_logits;
    {
      torch::NoGradGuard no_grad;
      teacher_logits = teacher_->forward(with_noise(batch.input));
    }
    torch::Tensor student = torch::softmax(outputs[""].to(torch::kFloat), 1);
    torch::Tensor consistency =
        torch::mse_loss(student, torch::softmax(teacher_logits.to(torch::kFloat), 1));
    torch::Tensor loss = consistency * consistency_weight();
    consistency_sum_.add(consistency.detach());
    batches_ += 1;
    torch::Tensor rows = data::labelled_indices(batch);
    if (rows.numel() > 0) {
      models::NamedOutputs labelled;
      labelled.insert("", outputs[""].index_select(0, rows.to(outputs[""].device())));
      torch::Tensor class_loss = objective.compute_outputs(labelled, data::batch_rows(batch, rows));
      loss = loss + class_loss * (double(rows.numel()) / double(batch.size()));
    }
    last_loss_ = loss.detach();
    return loss;
  }

  torch::Tensor counted_loss(const Objective&) const override { return last_loss_; }

  void after_update(models::Model& model) override {
    updates_ += 1;
    double decay = std::min(1.0 - 1.0 / double(updates_ + 1), options_.ema_decay);
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> averages, weights;
    for (const auto& item : model.named_parameters()) {
      averages.push_back(state_.at(item.key()));
      weights.push_back(item.value().detach());
    }
    torch::_foreach_mul_(averages, decay);
    torch::_foreach_add_(averages, weights, 1 - decay);
  }

  MetricValues take_values(distributed::Context& context) override {
    std::vector<double> sums = {consistency_sum_.take(), double(batches_)};
    context.all_reduce(sums, distributed::ReduceOp::kSum);
    batches_ = 0;
    if (sums[1] == 0) return {};
    return {{"train/mean_teacher/consistency", sums[0] / sums[1]},
            {"train/mean_teacher/consistency_weight", consistency_weight()}};
  }
  std::vector<std::string> tags() const override {
    return {"train/mean_teacher/consistency", "train/mean_teacher/consistency_weight"};
  }

  const NamedTensors* evaluation_weights() const override { return &state_; }
  bool validates_student() const override { return true; }
  bool takes_unlabelled() const override { return true; }

  Json state() const override { return {{"updates", updates_}}; }
  void load_state(const Json& state, const std::string& file) override {
    const Json& updates = state.contains("updates") ? state.at("updates") : Json();
    if (!updates.is_number_integer() || updates.get<int64_t>() < 0)
      throw DataError(file, -1, -1,
                      "train state key \"loop.updates\": expected the mean teacher's count of "
                      "updates, got " +
                          updates.dump());
    updates_ = updates.get<int64_t>();
  }
  NamedTensors tensors() const override { return state_; }
  void load_tensors(const NamedTensors& tensors) override { copy_weights(tensors); }
  std::string tensor_file() const override { return "ema"; }

 private:
  torch::Tensor with_noise(const torch::Tensor& input) const {
    if (options_.noise == 0 || !input.is_floating_point()) return input;
    return input + torch::randn_like(input) * options_.noise;
  }

  double consistency_weight() const {
    if (options_.rampup_steps == 0) return options_.consistency;
    double t = std::min(1.0, double(updates_) / double(options_.rampup_steps));
    return options_.consistency * std::exp(-5.0 * (1 - t) * (1 - t));
  }

  // Into the teacher, by name: every one of its tensors, of its shape (a checkpoint's file may
  // have been damaged).
  void copy_weights(const NamedTensors& from) {
    torch::NoGradGuard no_grad;
    for (auto& [name, tensor] : state_) {
      auto found = from.find(name);
      if (found == from.end()) throw Error("the mean teacher's " + name + " is missing");
      if (found->second.sizes() != tensor.sizes())
        throw Error(fmt::format("the mean teacher's {} is [{}], the model's [{}]", name,
                                fmt::join(found->second.sizes(), ", "),
                                fmt::join(tensor.sizes(), ", ")));
      tensor.copy_(found->second);
    }
  }

  MeanTeacherOptions options_;
  std::shared_ptr<models::Model> teacher_;
  NamedTensors state_;  // the teacher's parameters and buffers, by the student's names
  int64_t updates_ = 0;
  DeviceSum consistency_sum_;
  torch::Tensor last_loss_;
  int64_t batches_ = 0;
};

}  // namespace

KILN_REGISTER(engine::loop_registry, "mean_teacher", MeanTeacher, MeanTeacherOptions,
              "Semi-supervised: the model learns from labelled examples and from agreeing with "
              "its weights' moving average on every example (data.labels_per_class).");

}  // namespace kiln::loops
