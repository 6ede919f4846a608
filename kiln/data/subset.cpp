#include "kiln/data/subset.h"

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/data/loader.h"

namespace kiln::data {

SubsetDataset::SubsetDataset(std::shared_ptr<const Dataset> base, torch::Tensor indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  KILN_ASSERT(indices_.dim() == 1 && indices_.scalar_type() == torch::kInt64);
}

Batch SubsetDataset::gather(const torch::Tensor& indices) const {
  return base_->gather(indices_.index_select(0, indices));
}

std::pair<torch::Tensor, torch::Tensor> carve_indices(int64_t n, double fraction, uint64_t seed) {
  // Epoch -1: a permutation of its own, never one that a training epoch (0, 1, ...) uses.
  std::vector<int64_t> order = epoch_order(n, seed, -1, true);
  auto carved = static_cast<int64_t>(std::llround(double(n) * fraction));
  KILN_CHECK(carved > 0 && carved < n,
             "data.val_fraction {} of {} examples leaves an empty training or validation split",
             fraction, n);
  torch::Tensor all = torch::tensor(order, torch::kInt64);
  return {std::get<0>(all.slice(0, carved).sort()), std::get<0>(all.slice(0, 0, carved).sort())};
}

std::shared_ptr<const Dataset> take_range(std::shared_ptr<const Dataset> base, int64_t skip,
                                          int64_t take, const std::string& path) {
  if (base->as_streaming() && (skip > 0 || take > 0))
    throw ConfigError(path + (skip > 0 ? ".skip" : ".take"), "",
                      "a streamed dataset (tfrecord with cache: none) cannot be cut; use the "
                      "dataset's limit, or cache: records");
  int64_t n = base->size();
  if (skip >= n && (skip > 0 || take > 0))
    throw ConfigError(path + ".skip", "",
                      fmt::format("skipping {} of {} examples leaves none", skip, n));
  int64_t end = take == 0 ? n : std::min(n, skip + take);
  if (skip == 0 && end == n) return base;
  return std::make_shared<SubsetDataset>(base, torch::arange(skip, end, torch::kInt64));
}

}  // namespace kiln::data
