#include "kiln/data/resident_dataset.h"

#include <fmt/format.h>

#include "kiln/core/error.h"

namespace kiln::data {
namespace {

// Examples are gathered in slices of this many, so that the host holds one slice at a time
// beside what is already on the device.
constexpr int64_t kSlice = 8192;

// The batches' tensors put end to end: one batch of all their examples.
Batch stacked(const std::vector<Batch>& parts) {
  auto joined = [&](auto part) {
    std::vector<torch::Tensor> tensors;
    for (const Batch& batch : parts) tensors.push_back(part(batch));
    if (tensors.empty() || !tensors.front().defined()) return torch::Tensor();
    return tensors.size() == 1 ? tensors.front() : torch::cat(tensors);
  };
  Batch all;
  all.input = joined([](const Batch& b) { return b.input; });
  all.target = joined([](const Batch& b) { return b.target; });
  if (parts.empty()) return all;
  for (const auto& item : parts.front().targets) {
    const std::string& name = item.first;
    all.targets[name] = joined([&](const Batch& b) { return b.targets.at(name); });
  }
  return all;
}

Batch moved_to(const Batch& batch, torch::Device device) {
  Batch moved;
  if (batch.input.defined()) moved.input = batch.input.to(device);
  if (batch.target.defined()) moved.target = batch.target.to(device);
  for (const auto& [name, values] : batch.targets) moved.targets[name] = values.to(device);
  return moved;
}

Batch rows_of(const Batch& all, const torch::Tensor& indices) {
  Batch rows;
  if (all.input.defined()) rows.input = all.input.index_select(0, indices);
  if (all.target.defined()) rows.target = all.target.index_select(0, indices);
  for (const auto& [name, values] : all.targets)
    rows.targets[name] = values.index_select(0, indices);
  return rows;
}

class ResidentDataset : public Dataset {
 public:
  ResidentDataset(std::shared_ptr<const Dataset> source, torch::Device device)
      : source_(std::move(source)), device_(device) {
    std::vector<Batch> there, targets_here;
    for (int64_t start = 0; start < source_->size(); start += kSlice) {
      int64_t end = std::min(source_->size(), start + kSlice);
      Batch slice = source_->gather(torch::arange(start, end, torch::kInt64));
      there.push_back(moved_to(slice, device_));
      if (!device_.is_cpu()) targets_here.push_back({{}, slice.target, slice.targets});
    }
    all_ = stacked(there);
    host_targets_ = stacked(targets_here);
  }

  int64_t size() const override { return source_->size(); }
  std::vector<int64_t> input_shape() const override { return source_->input_shape(); }
  torch::Dtype input_dtype() const override { return source_->input_dtype(); }
  const TabularDataset* as_tabular() const override { return source_->as_tabular(); }
  SkippedRecords skipped_records() const override { return source_->skipped_records(); }
  ExampleOrigin locate(int64_t index) const override { return source_->locate(index); }
  DatasetInfo info() const override { return source_->info(); }

  Batch gather(const torch::Tensor& indices) const override {
    if (device_.is_cpu()) return rows_of(all_, indices);
    // The indices cross to the device without the host waiting; the rows never leave it.
    Batch batch = rows_of(all_, indices.pin_memory().to(device_, /*non_blocking=*/true));
    // The losses check the targets' values in host memory (Batch::host_target).
    Batch here = rows_of(host_targets_, indices);
    batch.host_target = here.target;
    batch.host_targets = here.targets;
    return batch;
  }

 private:
  std::shared_ptr<const Dataset> source_;
  torch::Device device_;
  Batch all_;           // every example, on the device
  Batch host_targets_;  // their targets in host memory (no input), when the device is not the CPU
};

}  // namespace

std::shared_ptr<const Dataset> resident_on(std::shared_ptr<const Dataset> source,
                                           torch::Device device, const std::string& config_path,
                                           const std::string& split) {
  if (source->as_streaming())
    throw ConfigError(config_path, "",
                      fmt::format("the {} data is streamed from its files every epoch, so its "
                                  "examples cannot be held by index: give the dataset "
                                  "`cache: decoded`, or set data.cache: none",
                                  split));
  if (source->size() == 0) return source;
  try {
    return std::make_shared<ResidentDataset>(std::move(source), device);
  } catch (const c10::Error& e) {
    // Out of memory above all: say which setting asked for it.
    throw ConfigError(config_path, "",
                      fmt::format("cannot hold the {} data on {}: {}; use data.cache: none", split,
                                  device.str(), e.what_without_backtrace()));
  }
}

}  // namespace kiln::data
