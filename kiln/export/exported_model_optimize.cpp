// ExportedModel::optimize_for_inference: the rewrites for inference, each kept only where it pays
// on the machine the model is served on.

#include <fmt/format.h>

#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kiln/export/exported_model.h"
#include "kiln/export/signatures.h"
#include "kiln/models/fold_batch_norms.h"
#include "kiln/models/onednn_convolutions.h"

namespace kiln::exports {
namespace {

// A few runs after a first that warms caches and oneDNN's kernels: at least 3, at most 7, for
// about half a second (a large model at a large batch is timed 3 times, however long).
double median_milliseconds(const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  run();
  std::vector<double> times;
  Clock::time_point began = Clock::now();
  while (times.size() < 3 ||
         (times.size() < 7 && Clock::now() - began < std::chrono::milliseconds(500))) {
    Clock::time_point start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
  return times[times.size() / 2];
}

std::string plural(int count, const char* noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string folded_text(int folded) {
  return folded == 0 ? "nothing to rewrite"
                     : plural(folded, "batch norm") + " folded into convolutions";
}

}  // namespace

std::pair<std::shared_ptr<models::Model>, models::EmbeddingLayer> ExportedModel::twin() const {
  const experiment::ModelInput& input = inputs_.front();
  std::shared_ptr<models::Model> made = models::build_model(
      network_,
      experiment::model_inputs_after(transforms_, input.shape, input.dtype, input.layout));
  torch::NoGradGuard no_grad;
  // Built from the same spec: the same names and shapes.
  auto theirs = model_->named_parameters(true);
  for (auto& item : made->named_parameters(true)) item.value().copy_(theirs[item.key()]);
  auto their_buffers = model_->named_buffers(true);
  for (auto& item : made->named_buffers(true)) item.value().copy_(their_buffers[item.key()]);
  made->to(device_);
  made->eval();
  models::EmbeddingLayer embedding(*made, embedding_layer_, embedding_path_);
  return {made, embedding};
}

std::string ExportedModel::optimize_for_inference(int64_t batch, const BatchTimer& timer) {
  if (torchscript_) {
    try {
      *torchscript_ = torch::jit::optimize_for_inference(*torchscript_);
      return "frozen and optimized for inference";
    } catch (const std::exception& e) {  // a model the passes cannot take: served as loaded
      std::string message = e.what();
      return "served as loaded, as it could not be frozen: " +
             message.substr(0, message.find('\n'));
    }
  }
  bool convolutions = false;  // else there is nothing to time, and no twin to build
  for (const auto& module : model_->modules())
    convolutions = convolutions || dynamic_cast<const torch::nn::Conv2dImpl*>(module.get());
  if (!convolutions || !device_.is_cpu()) return folded_text(models::fold_batch_norms(*model_));
  // The candidate on oneDNN is a twin: the rewrite cannot be undone where it does not pay.
  auto [onednn, onednn_embedding] = twin();
  int folded = models::fold_batch_norms(*model_);
  models::fold_batch_norms(*onednn);
  int rewritten = models::run_convolutions_on_onednn(*onednn);
  std::string done = plural(folded, "batch norm") + " folded into convolutions";
  if (rewritten == 0) return folded_text(folded);
  const serving::Signature& signature = signatures_.count("serving_default")
                                            ? signatures_.at("serving_default")
                                            : signatures_.begin()->second;
  std::vector<int64_t> shape = {std::max<int64_t>(batch, 1)};
  shape.insert(shape.end(), inputs_.front().shape.begin(), inputs_.front().shape.end());
  torch::Tensor example = torch::zeros(shape, torch::dtype(inputs_.front().dtype)).to(device_);
  auto time = [&](models::Model& model, const models::EmbeddingLayer& embedding) {
    torch::NoGradGuard no_grad;
    auto run = [&] { run_signature(model, signature, transforms_, embedding, example); };
    return timer ? timer(run) : median_milliseconds(run);
  };
  double plain_ms = time(*model_, *embedding_), onednn_ms = time(*onednn, onednn_embedding);
  std::string measured = fmt::format(
      "{:.2f} ms a batch of {} on oneDNN, {:.2f} ms on LibTorch's own convolutions, "
      "measured at load",
      onednn_ms, shape[0], plain_ms);
  if (plain_ms <= onednn_ms)
    return fmt::format("{}; convolutions kept on LibTorch's own ({})", done, measured);
  model_ = onednn;
  embedding_.emplace(onednn_embedding);
  return fmt::format("{}, {} on oneDNN ({})", done, plural(rewritten, "convolution"), measured);
}

}  // namespace kiln::exports
