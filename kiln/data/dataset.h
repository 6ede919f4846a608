#pragma once
// Datasets: indexable collections of (input, target) examples. The minimal path keeps whole
// datasets as tensors in memory and gathers batches with one index_select; the streaming pipeline
// (TFRecord shards, worker threads) builds on the same interface (issue #3).
// Thread-safety: gather() is const and safe to call from several threads.

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/input_layout.h"
#include "kiln/core/registry.h"
#include "kiln/io/image_input.h"
#include "kiln/io/record_stream.h"

namespace kiln::data {

/// More targets by name, for models with several heads (a tfrecord dataset's `targets:`).
using NamedTargets = std::map<std::string, torch::Tensor>;

/// Where an example came from, for messages about bad data: the file, record and byte offset
/// when the dataset reads records (an empty file when it cannot say: `record` is then the
/// example's index in the dataset), and the feature its target is read from, if it has one.
struct ExampleOrigin {
  io::RecordLocation where;
  std::string target_feature;
};

/// A batch of examples; dimension 0 indexes the examples.
struct Batch {
  torch::Tensor input, target;
  NamedTargets targets;
  /// Where row `row` came from; set by the loader (empty for a batch made by hand).
  std::function<ExampleOrigin(int64_t row)> origin;
  /// Set while the tensors are still being copied to their device on another stream: makes the
  /// calling thread's stream wait for the copy. The loader calls it as it hands the batch over.
  std::function<void()> arrive{};
  /// The targets as the loader made them, in host memory, once `target` and `targets` were sent
  /// to a device: losses check their values (a class out of range) there, without waiting for
  /// the device. Undefined and empty while the batch is in host memory.
  torch::Tensor host_target;
  NamedTargets host_targets;
  int64_t size() const { return input.size(0); }
};

class StreamingDataset;
class TabularDataset;

/// What a dataset does with a damaged or non-conforming record (`on_corrupt`).
enum class OnCorrupt { kFail, kSkip };
inline EnumNameList<OnCorrupt> enum_names(OnCorrupt) {
  return {{OnCorrupt::kFail, "fail"}, {OnCorrupt::kSkip, "skip"}};
}

/// Records a dataset dropped as damaged or non-conforming (`on_corrupt: skip`), the same ones
/// every epoch.
struct SkippedRecords {
  int64_t count = 0;
  std::string first_problem;
  int64_t bytes = 0;  // of damaged frames and what was passed over after them
};

/// What a dataset tells of its examples besides their tensors, one plain value, so that a new
/// fact is a field rather than another virtual method.
struct DatasetInfo {
  /// The names of the named targets every batch carries (Batch::targets).
  std::vector<std::string> target_names;
  /// The name of each class a target indexes, when the data knows them; exports and servers
  /// answer with these.
  std::vector<std::string> class_names;
  /// How an encoded image (PNG, JPEG) becomes one input, when the inputs are images the dataset
  /// decoded or could have: servers and `kiln predict` take image files through it.
  std::optional<io::ImageInput> image_input;
  /// Where the named parts and category indices of tabular inputs sit in the input row; empty
  /// for other data.
  InputLayout input_layout;
  /// Values its feature columns found in no vocabulary (they went to OOV buckets), by column,
  /// since the dataset was made until this info was asked for.
  std::map<std::string, int64_t> unseen_categories;
  /// Whether a target of -1 marks an example without its label (data.labels_per_class,
  /// partly_labelled.h) rather than damage.
  bool unlabelled_marked = false;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  /// The examples at `indices` (1-D int64), stacked into one batch.
  virtual Batch gather(const torch::Tensor& indices) const = 0;
  /// Shape of one input example without the batch dimension, e.g. {1, 28, 28}.
  virtual std::vector<int64_t> input_shape() const = 0;
  /// The element type of the inputs as the dataset delivers them (before any transform).
  virtual torch::Dtype input_dtype() const = 0;
  /// Non-null when the dataset is read front to back every epoch instead of indexed.
  virtual const StreamingDataset* as_streaming() const { return nullptr; }
  /// Non-null when its inputs are records of named features that feature columns turn into
  /// numbers (`input: [a, b, ...]`, `inputs: {...}`); gather() then gives no input
  /// (ColumnsDataset does). Its queries are in tabular_dataset.h.
  virtual const TabularDataset* as_tabular() const { return nullptr; }
  virtual SkippedRecords skipped_records() const { return {}; }
  /// Where example `index` came from (see ExampleOrigin).
  virtual ExampleOrigin locate(int64_t index) const { return {{"", index, -1}, ""}; }
  /// What the data tells of its examples besides their tensors (see DatasetInfo).
  virtual DatasetInfo info() const { return {}; }
};

/// The info of a dataset that knows only its classes' names.
inline DatasetInfo classes_info(std::vector<std::string> class_names) {
  DatasetInfo info;
  info.class_names = std::move(class_names);
  return info;
}

/// "color 12, shape 1": DatasetInfo::unseen_categories for messages.
std::string unseen_text(const std::map<std::string, int64_t>& unseen);

/// The image input of datasets that deliver images as [C, H, W] floats in [0, 1] (IDX, image
/// folders): `shape` is one example's.
io::ImageInput unit_scaled_chw_image(const std::vector<int64_t>& shape);

/// A dataset too large to hold: its records are streamed from disk each epoch (sharded,
/// interleaved, through a shuffle buffer) and decoded batch by batch. gather() is unavailable.
class StreamingDataset : public Dataset {
 public:
  Batch gather(const torch::Tensor& indices) const override;
  const StreamingDataset* as_streaming() const override { return this; }
  /// Records each of `world` ranks reads per epoch (equal for all: training).
  virtual int64_t examples_per_epoch(int64_t world) const = 0;
  /// All the records rank `rank` of `world` holds (the ranks' shares differ by files or by one
  /// record, and together are every record once: evaluation).
  virtual int64_t examples_of_rank(int64_t rank, int64_t world) const = 0;
  /// The records of one epoch; the dataset fills in its buffer and cycle length.
  virtual std::unique_ptr<io::RecordStream> open(io::EpochPlan plan) const = 0;
  /// Decodes records into a batch.
  virtual Batch decode(const std::vector<io::Record>& records) const = 0;
};

/// A dataset held as tensors whose first dimensions agree: inputs, targets and any named targets.
class TensorDataset : public Dataset {
 public:
  TensorDataset(torch::Tensor inputs, torch::Tensor targets, NamedTargets named = {});
  int64_t size() const override { return inputs_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override;
  torch::Dtype input_dtype() const override { return inputs_.scalar_type(); }
  /// The names of its named targets.
  DatasetInfo info() const override;

 private:
  torch::Tensor inputs_, targets_;
  NamedTargets named_;
};

using DatasetRegistry = Registry<Dataset>;
DatasetRegistry& dataset_registry();

}  // namespace kiln::data
