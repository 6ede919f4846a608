// ema: an exponential moving average of the weights, updated after every optimizer step
// (shadow = decay * shadow + (1 - decay) * weights). With warm-up the decay starts low,
// min(decay, (1 + n) / (10 + n)) after n updates as in TensorFlow's ExponentialMovingAverage, so
// the first random weights are soon forgotten. The average is what validation evaluates and what
// the checkpoint's ema.safetensors holds for eval and export; the raw weights keep training.

#include "kiln/engine/callback.h"

namespace kiln::engine {
namespace {

struct EmaOptions {
  double decay = 0.999;
  bool warmup = true;
  void describe(Schema& s) {
    s.field("decay", decay, "How much of the average each step keeps.")
        .check([](double d) { return d > 0 && d < 1; }, "in (0, 1)");
    s.field("warmup", warmup, "Start with a lower decay, min(decay, (1 + n) / (10 + n)).");
  }
};

class Ema : public Callback {
 public:
  explicit Ema(const EmaOptions& o) : options_(o) {}

  void on_fit_begin(TrainerView& view) override {
    if (shadow_.empty()) copy_model(view);  // a resumed run has its average already
  }

  void on_step_end(TrainerView& view, const Progress&) override {
    updates_ += 1;
    double n = double(updates_);
    double decay = options_.warmup ? std::min(options_.decay, (1 + n) / (10 + n)) : options_.decay;
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> averages, weights;
    for (const auto& [name, tensor] : named_state(view.model())) {
      torch::Tensor& average = shadow_.at(name);
      if (average.is_floating_point()) {
        averages.push_back(average);
        weights.push_back(tensor.detach());
      } else {
        average.copy_(tensor);  // counters such as batchnorm's num_batches_tracked
      }
    }
    if (averages.empty()) return;
    // Multi-tensor updates: on the GPU two launches for the whole model, not two per tensor.
    torch::_foreach_mul_(averages, decay);
    torch::_foreach_add_(averages, weights, 1 - decay);
  }

  void on_weights_replaced(TrainerView& view) override { copy_model(view); }
  const NamedTensors* evaluation_weights() const override { return &shadow_; }

  Json state() const override { return {{"updates", updates_}}; }
  void load_state(const Json& state) override { updates_ = state.at("updates").get<int64_t>(); }
  NamedTensors tensors() const override { return shadow_; }
  void load_tensors(const NamedTensors& tensors) override {
    loaded_ = tensors;
    // Mid-run (a NaN rewind) the average goes back with the weights; before on_fit_begin it waits
    // there for the model's device.
    if (!shadow_.empty()) copy_loaded();
  }

 private:
  void copy_model(TrainerView& view) {
    shadow_.clear();
    for (const auto& [name, tensor] : named_state(view.model()))
      shadow_[name] = tensor.detach().clone();
    copy_loaded();
  }

  void copy_loaded() {
    torch::NoGradGuard no_grad;
    for (auto& [name, average] : shadow_) {
      auto loaded = loaded_.find(name);
      if (loaded != loaded_.end()) average.copy_(loaded->second);
    }
    loaded_.clear();
  }

  EmaOptions options_;
  int64_t updates_ = 0;
  NamedTensors shadow_;
  NamedTensors loaded_;  // from a checkpoint, before on_fit_begin knows the model's device
};

}  // namespace

KILN_REGISTER(callback_registry, "ema", Ema, EmaOptions,
              "Exponential moving average of the weights, used for validation, eval and export.");

}  // namespace kiln::engine
