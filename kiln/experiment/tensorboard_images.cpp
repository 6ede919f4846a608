#include "kiln/experiment/tensorboard_images.h"

#include <string>

namespace kiln::experiment {

namespace {

constexpr int64_t kMaxClassesDrawn = 100;  // a larger matrix would not be read as a picture

bool is_class_batch(const torch::Tensor& target, const torch::Tensor& output) {
  return target.defined() && target.dim() == 1 && !target.is_floating_point() &&
         output.dim() == 2 && output.size(0) == target.size(0) && output.size(1) > 1;
}

// The image's tag for `head`'s confusion matrix.
std::string confusion_tag(const std::string& head) {
  return head.empty() ? "confusion_matrix" : head + "/confusion_matrix";
}

// The confusion_matrix metric's values for `head` at this validation, as a matrix; empty
// without them.
std::vector<std::vector<int64_t>> measured_confusion(const engine::MetricValues& values,
                                                     const std::string& head) {
  const std::string prefix = "val/" + confusion_tag(head) + "/true_";
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

TensorBoardImages::TensorBoardImages(tensorboard::EventLog& log, int64_t max_images,
                                     std::vector<std::string> labels, Clock clock)
    : log_(log), max_images_(max_images), labels_(std::move(labels)), clock_(std::move(clock)) {
  type = "tensorboard_images";
  config_path = "tensorboard.images";
}

void TensorBoardImages::attach(engine::Objective& validation) {
  validation.observe_outputs(
      [this](const data::Batch& batch, const engine::Objective::HeadOutput& head) {
        if (active_) take(batch, head);
      });
}

void TensorBoardImages::on_validation_begin(engine::TrainerView&) {
  active_ = true;
  samples_.clear();
  counts_.clear();
  misclassified_.clear();
  misclassified_head_.reset();
}

void TensorBoardImages::take(const data::Batch& batch, const engine::Objective::HeadOutput& head) {
  if (head.first) {
    batch_start_ = samples_.size();
    if (is_image_batch(batch.input))
      for (int64_t i = 0; i < batch.size() && int64_t(samples_.size()) < max_images_; ++i)
        samples_.push_back({validation_image(batch.input[i]), {}, {}, {}});
  }
  if (!is_class_batch(head.target, head.output)) return label_samples(batch, head, nullptr);
  Classes classes{head.target.to(torch::kCPU, torch::kInt64).contiguous(),
                  head.output.argmax(1).to(torch::kCPU, torch::kInt64).contiguous()};
  count_classes(head.head, head.output.size(1), classes);
  label_samples(batch, head, &classes);
  collect_misclassified(batch, head.head, classes);
}

void TensorBoardImages::count_classes(const std::string& head, int64_t count,
                                      const Classes& classes) {
  auto size = static_cast<size_t>(count);
  auto& counts = counts_[head];
  if (counts.size() < size) {
    counts.resize(size);
    for (auto& row : counts) row.resize(size, 0);
  }
  const int64_t *truth = classes.truth.data_ptr<int64_t>(),
                *predicted = classes.predicted.data_ptr<int64_t>();
  for (int64_t i = 0; i < classes.truth.size(0); ++i)
    if (truth[i] >= 0 && truth[i] < count) counts[size_t(truth[i])][size_t(predicted[i])] += 1;
}

void TensorBoardImages::label_samples(const data::Batch& batch,
                                      const engine::Objective::HeadOutput& head,
                                      const Classes* classes) {
  bool reconstructs = head.output.sizes() == batch.input.sizes();
  for (size_t s = batch_start_; s < samples_.size(); ++s) {
    auto i = static_cast<int64_t>(s - batch_start_);
    tensorboard::Sample& sample = samples_[s];
    if (classes && !sample.truth) {
      sample.truth = classes->truth.data_ptr<int64_t>()[i];
      sample.prediction = classes->predicted.data_ptr<int64_t>()[i];
    }
    if (reconstructs && !sample.reconstruction)
      sample.reconstruction = validation_image(head.output[i]);
  }
}

void TensorBoardImages::collect_misclassified(const data::Batch& batch, const std::string& head,
                                              const Classes& classes) {
  if (misclassified_head_ && *misclassified_head_ != head) return;
  misclassified_head_ = head;
  if (!is_image_batch(batch.input)) return;
  const int64_t *truth = classes.truth.data_ptr<int64_t>(),
                *predicted = classes.predicted.data_ptr<int64_t>();
  for (int64_t i = 0; i < classes.truth.size(0) && int64_t(misclassified_.size()) < max_images_;
       ++i)
    if (truth[i] >= 0 && truth[i] != predicted[i])
      misclassified_.push_back({validation_image(batch.input[i]), truth[i], predicted[i], {}});
}

const std::vector<std::string>& TensorBoardImages::labels_of(const std::string& head) const {
  static const std::vector<std::string> none;
  return head.empty() ? labels_ : none;
}

void TensorBoardImages::on_validation_end(engine::TrainerView& view,
                                          const engine::MetricValues& values) {
  active_ = false;
  int64_t step = view.progress().steps;
  double now = clock_();
  const std::vector<std::string>& grid_labels =
      misclassified_head_ ? labels_of(*misclassified_head_) : labels_;
  if (!samples_.empty())
    log_.image("val", "samples", step, tensorboard::sample_grid(samples_, grid_labels), now);
  if (!misclassified_.empty())
    log_.image("val", "misclassified", step, tensorboard::sample_grid(misclassified_, grid_labels),
               now);
  for (const auto& [head, counted] : counts_) {
    std::vector<std::vector<int64_t>> counts = measured_confusion(values, head);
    if (counts.empty()) counts = counted;
    if (!counts.empty() && int64_t(counts.size()) <= kMaxClassesDrawn)
      log_.image("val", confusion_tag(head), step,
                 tensorboard::confusion_image(counts, labels_of(head)), now);
  }
  log_.flush();
}

}  // namespace kiln::experiment
