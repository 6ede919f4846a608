#include "kiln/engine/tensorboard_images.h"

#include <string>

namespace kiln::engine {
namespace {

constexpr int64_t kMaxClassesDrawn = 100;  // a larger matrix would not be read as a picture

bool is_class_batch(const torch::Tensor& target, const torch::Tensor& output) {
  return target.defined() && target.dim() == 1 && !target.is_floating_point() &&
         output.dim() == 2 && output.size(0) == target.size(0) && output.size(1) > 1;
}

// The confusion_matrix metric's values at this validation, as a matrix; empty without them.
std::vector<std::vector<int64_t>> measured_confusion(const MetricValues& values) {
  const std::string prefix = "val/confusion_matrix/true_";
  std::vector<std::vector<int64_t>> counts;
  for (const auto& [tag, value] : values) {
    if (tag.rfind(prefix, 0) != 0) continue;
    size_t pred = tag.find("/pred_", prefix.size());
    if (pred == std::string::npos) continue;
    auto truth = static_cast<size_t>(std::stoll(tag.substr(prefix.size(), pred - prefix.size())));
    auto predicted = static_cast<size_t>(std::stoll(tag.substr(pred + 6)));
    size_t size = std::max({counts.size(), truth + 1, predicted + 1});
    counts.resize(size);
    for (auto& row : counts) row.resize(size, 0);
    counts[truth][predicted] = static_cast<int64_t>(value);
  }
  return counts;
}

}  // namespace

io::Image validation_image(const torch::Tensor& example) {
  torch::Tensor pixels = example.detach().to(torch::kCPU, torch::kFloat32);
  if (pixels.dim() == 2) pixels = pixels.unsqueeze(0);
  float low = pixels.min().item<float>(), high = pixels.max().item<float>();
  pixels = ((pixels - low) * (255.0f / std::max(high - low, 1e-6f))).round().clamp(0, 255);
  torch::Tensor hwc = pixels.permute({1, 2, 0}).to(torch::kUInt8).contiguous();
  io::Image image{hwc.size(0), hwc.size(1), hwc.size(2), {}};
  image.pixels.assign(hwc.data_ptr<uint8_t>(), hwc.data_ptr<uint8_t>() + hwc.numel());
  return image;
}

bool is_image_batch(const torch::Tensor& input) {
  return (input.dim() == 4 && (input.size(1) == 1 || input.size(1) == 3)) || input.dim() == 3;
}

TensorBoardImages::TensorBoardImages(tensorboard::EventLog& log, int64_t max_images, Clock clock)
    : log_(log), max_images_(max_images), clock_(std::move(clock)) {
  type = "tensorboard_images";
  config_path = "tensorboard.images";
}

void TensorBoardImages::attach(Objective& validation) {
  validation.observe_outputs([this](const data::Batch& batch, const torch::Tensor& output) {
    if (active_) take(batch, output);
  });
}

void TensorBoardImages::on_validation_begin(TrainerView&) {
  active_ = true;
  samples_.clear();
  counts_.clear();
}

void TensorBoardImages::take(const data::Batch& batch, const torch::Tensor& output) {
  bool classifier = is_class_batch(batch.target, output);
  if (classifier) count_classes(batch.target, output);
  if (is_image_batch(batch.input)) take_samples(batch, output, classifier);
}

void TensorBoardImages::count_classes(const torch::Tensor& target, const torch::Tensor& output) {
  auto classes = static_cast<size_t>(output.size(1));
  if (counts_.size() < classes) {
    counts_.resize(classes);
    for (auto& row : counts_) row.resize(classes, 0);
  }
  torch::Tensor truth = target.to(torch::kCPU, torch::kInt64).contiguous();
  torch::Tensor predicted = output.argmax(1).to(torch::kCPU, torch::kInt64).contiguous();
  for (int64_t i = 0; i < truth.size(0); ++i) {
    int64_t t = truth.data_ptr<int64_t>()[i], p = predicted.data_ptr<int64_t>()[i];
    if (t >= 0 && static_cast<size_t>(t) < classes) counts_[size_t(t)][size_t(p)] += 1;
  }
}

void TensorBoardImages::take_samples(const data::Batch& batch, const torch::Tensor& output,
                                     bool classifier) {
  bool reconstructs = output.sizes() == batch.input.sizes();
  for (int64_t i = 0; i < batch.size() && int64_t(samples_.size()) < max_images_; ++i) {
    tensorboard::Sample sample{validation_image(batch.input[i]), {}, {}, {}};
    if (classifier) {
      sample.truth = batch.target[i].item<int64_t>();
      sample.prediction = output[i].argmax().item<int64_t>();
    }
    if (reconstructs) sample.reconstruction = validation_image(output[i]);
    samples_.push_back(std::move(sample));
  }
}

void TensorBoardImages::on_validation_end(TrainerView& view, const MetricValues& values) {
  active_ = false;
  int64_t step = view.progress().steps;
  double now = clock_();
  if (!samples_.empty())
    log_.image("val", "samples", step, tensorboard::sample_grid(samples_), now);
  std::vector<std::vector<int64_t>> counts = measured_confusion(values);
  if (counts.empty()) counts = counts_;
  if (!counts.empty() && int64_t(counts.size()) <= kMaxClassesDrawn)
    log_.image("val", "confusion_matrix", step, tensorboard::confusion_image(counts), now);
  log_.flush();
}

}  // namespace kiln::engine
