#pragma once
// TensorBoard's images at each validation, in RUN/tensorboard/val/: `samples`, a grid of the
// first `tensorboard.max_images` validation inputs (images: [N, C, H, W] with 1 or 3 channels, or
// [N, H, W]) with their true and predicted classes, or beside the model's reconstructions when it
// outputs what it takes (an autoencoder); `misclassified`, as many of the validation inputs a
// classifier got wrong, with their true and predicted classes (by name where the data has
// class names); and `confusion_matrix` for a classifier, with the class names, from the
// confusion_matrix metric's values when the config measures it (over every process's share),
// else counted here from the validation batches this process sees. A model of several heads
// gets one grid (the labels of its first classifying head, the output of its first
// reconstructing one) and `HEAD/confusion_matrix` per classifying head. Built in, not a
// registered callback: the `tensorboard:` section switches it.
// Thread-safety: the training thread.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/console.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/objective.h"
#include "kiln/tensorboard/drawing.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

/// An input (one example: [C, H, W] or [H, W]) as 8-bit pixels, stretched from its own minimum to
/// its maximum (inputs are usually normalized by then).
io::Image validation_image(const torch::Tensor& example);
/// Whether a batch's inputs are images: [N, C, H, W] with 1 or 3 channels, or [N, H, W].
bool is_image_batch(const torch::Tensor& input);

class TensorBoardImages : public engine::Callback {
 public:
  /// `labels`: the training data's class names (may be empty).
  TensorBoardImages(tensorboard::EventLog& log, int64_t max_images, std::vector<std::string> labels,
                    Clock clock);
  /// Watches the batches `validation` computes (a stage's validation objective).
  void attach(engine::Objective& validation);

  void on_validation_begin(engine::TrainerView&) override;
  void on_validation_end(engine::TrainerView& view, const engine::MetricValues& values) override;

 private:
  // A classifying head's true and predicted class of each row of a batch, in host memory.
  struct Classes {
    torch::Tensor truth, predicted;  // int64 [N]
  };
  void take(const data::Batch& batch, const engine::Objective::HeadOutput& head);
  /// Adds what `head` tells of this batch's samples (from batch_start_ on) to them.
  void label_samples(const data::Batch& batch, const engine::Objective::HeadOutput& head,
                     const Classes* classes);
  void count_classes(const std::string& head, int64_t count, const Classes& classes);
  void collect_misclassified(const data::Batch& batch, const std::string& head,
                             const Classes& classes);
  /// The class names for `head`'s classes: the data's for a model of one output.
  const std::vector<std::string>& labels_of(const std::string& head) const;

  tensorboard::EventLog& log_;
  int64_t max_images_;
  std::vector<std::string> labels_;
  Clock clock_;
  bool active_ = false;
  std::vector<tensorboard::Sample> samples_;
  size_t batch_start_ = 0;  // the current batch's first sample
  std::map<std::string, std::vector<std::vector<int64_t>>> counts_;  // by head
  std::vector<tensorboard::Sample> misclassified_;
  std::optional<std::string> misclassified_head_;  // the first classifying head
};

}  // namespace kiln::experiment
