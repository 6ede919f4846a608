#include "kiln/data/partly_labelled.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "kiln/core/error.h"
#include "kiln/data/loader.h"

namespace kiln::data {

PartlyLabelledDataset::PartlyLabelledDataset(std::shared_ptr<const Dataset> base,
                                             torch::Tensor order, int64_t unlabelled)
    : base_(std::move(base)), order_(std::move(order)), unlabelled_(unlabelled) {
  KILN_ASSERT(order_.dim() == 1 && order_.scalar_type() == torch::kInt64);
}

Batch PartlyLabelledDataset::gather(const torch::Tensor& indices) const {
  Batch batch = base_->gather(order_.index_select(0, indices));
  torch::Tensor unlabelled = indices < unlabelled_;
  batch.target = batch.target.masked_fill(unlabelled, kUnlabelled);
  return batch;
}

DatasetInfo PartlyLabelledDataset::info() const {
  DatasetInfo info = base_->info();
  info.unlabelled_marked = true;
  return info;
}

torch::Tensor labelled_indices(const Batch& batch) {
  // The host copy answers without waiting for the device, where the batch has one.
  const torch::Tensor& targets = batch.host_target.defined() ? batch.host_target : batch.target;
  return (targets != kUnlabelled).nonzero().squeeze(1).to(torch::kCPU);
}

Batch batch_rows(const Batch& batch, const torch::Tensor& rows) {
  torch::Tensor on_device = rows.to(batch.input.device());
  Batch part;
  part.input = batch.input.index_select(0, on_device);
  part.target = batch.target.index_select(0, on_device);
  for (const auto& [name, target] : batch.targets)
    part.targets[name] = target.index_select(0, on_device);
  if (batch.host_target.defined()) part.host_target = batch.host_target.index_select(0, rows);
  for (const auto& [name, target] : batch.host_targets)
    part.host_targets[name] = target.index_select(0, rows);
  if (batch.origin) {
    torch::Tensor kept = rows.contiguous();
    std::vector<int64_t> from(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel());
    part.origin = [origin = batch.origin, from](int64_t row) {
      return origin(from[static_cast<size_t>(row)]);
    };
  }
  return part;
}

Batch labelled_rows(const Batch& batch, const DatasetInfo& info) {
  if (!info.unlabelled_marked || batch.size() == 0) return batch;
  return batch_rows(batch, labelled_indices(batch));
}

namespace {

// Every example's class, read a slice at a time (the inputs are dropped as they come).
std::vector<int64_t> classes_of(const Dataset& base, const std::string& at) {
  std::vector<int64_t> classes;
  classes.reserve(static_cast<size_t>(base.size()));
  constexpr int64_t kSlice = 4096;
  for (int64_t first = 0; first < base.size(); first += kSlice) {
    int64_t count = std::min(kSlice, base.size() - first);
    torch::Tensor target = base.gather(torch::arange(first, first + count, torch::kInt64)).target;
    if (target.dim() != 1 || target.is_floating_point())
      throw ConfigError(at, "", "keeps labels of classes; this training data has no class targets");
    torch::Tensor values = target.to(torch::kInt64).contiguous();
    classes.insert(classes.end(), values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + count);
  }
  return classes;
}

}  // namespace

std::shared_ptr<const Dataset> partly_labelled(std::shared_ptr<const Dataset> base,
                                               int64_t per_class, double share, uint64_t seed,
                                               const std::string& path) {
  if (per_class == 0) return base;
  std::string at = path + ".labels_per_class";
  if (base->as_streaming())
    throw ConfigError(at, "",
                      "a streamed dataset (tfrecord with cache: none) cannot keep some labels; use "
                      "cache: records");
  std::vector<int64_t> classes = classes_of(*base, at);
  // Epoch -2: a permutation of its own, never a training epoch's nor data.val_fraction's (-1).
  std::vector<int64_t> order = epoch_order(base->size(), seed, -2, true);
  std::map<int64_t, int64_t> kept_of_class;
  std::vector<int64_t> labelled, unlabelled;
  for (int64_t index : order) {
    int64_t& kept = kept_of_class[classes[static_cast<size_t>(index)]];
    (kept < per_class ? labelled : unlabelled).push_back(index);
    if (kept < per_class) kept += 1;
  }
  // A class the data names but has no example of.
  for (int64_t label = 0; label < int64_t(base->info().class_names.size()); ++label)
    kept_of_class.emplace(label, 0);
  for (const auto& [label, kept] : kept_of_class)
    if (kept < per_class)
      throw ConfigError(
          at, "",
          fmt::format("class {} has {} training examples, fewer than {}", label, kept, per_class));
  if (share >= 1) unlabelled.clear();
  // Repeated so that labelled examples make about `share` of the epoch.
  int64_t repeats = 1;
  if (!unlabelled.empty())
    repeats = std::max<int64_t>(
        1, std::llround(share / (1 - share) * double(unlabelled.size()) / double(labelled.size())));
  std::vector<int64_t> all = unlabelled;
  for (int64_t r = 0; r < repeats; ++r) all.insert(all.end(), labelled.begin(), labelled.end());
  return std::make_shared<PartlyLabelledDataset>(base, torch::tensor(all, torch::kInt64),
                                                 static_cast<int64_t>(unlabelled.size()));
}

}  // namespace kiln::data
