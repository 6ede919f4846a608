#include "kiln/tune/fanova.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace kiln::tune {
namespace {

constexpr int kMaxDepth = 64;

// A leaf of a tree: the box of the space it covers and its prediction.
struct Leaf {
  std::vector<double> low, high;
  double value = 0;
};

class TreeGrower {
 public:
  TreeGrower(const std::vector<FanovaSample>& samples, size_t dimensions)
      : samples_(samples), dimensions_(dimensions) {}

  std::vector<Leaf> grow(std::vector<size_t> rows) {
    leaves_.clear();
    grow(rows, std::vector<double>(dimensions_, 0.0), std::vector<double>(dimensions_, 1.0), 0);
    return std::move(leaves_);
  }

 private:
  struct Split {
    size_t dimension = 0;
    double threshold = 0, error = 0;
    bool found = false;
  };

  // The split of `rows` along `d` with the least squared error, if any.
  void best_split(std::vector<size_t>& rows, size_t d, Split& best) const {
    std::sort(rows.begin(), rows.end(),
              [&](size_t a, size_t b) { return samples_[a].x[d] < samples_[b].x[d]; });
    double total = 0, total_squares = 0;
    for (size_t r : rows) {
      total += samples_[r].value;
      total_squares += samples_[r].value * samples_[r].value;
    }
    double left = 0, left_squares = 0, n = double(rows.size());
    for (size_t i = 0; i + 1 < rows.size(); ++i) {
      double v = samples_[rows[i]].value;
      left += v;
      left_squares += v * v;
      double here = samples_[rows[i]].x[d], next = samples_[rows[i + 1]].x[d];
      if (next <= here) continue;  // no threshold between equal coordinates
      double k = double(i + 1);
      double error = (left_squares - left * left / k) +
                     ((total_squares - left_squares) - (total - left) * (total - left) / (n - k));
      if (!best.found || error < best.error - 1e-12) best = {d, (here + next) / 2, error, true};
    }
  }

  void grow(std::vector<size_t>& rows, const std::vector<double>& low,
            const std::vector<double>& high, int depth) {
    double mean = 0;
    for (size_t r : rows) mean += samples_[r].value;
    mean /= double(rows.size());
    Split split;
    if (depth < kMaxDepth && rows.size() >= 2)
      for (size_t d = 0; d < dimensions_; ++d) best_split(rows, d, split);
    if (!split.found) {
      leaves_.push_back({low, high, mean});
      return;
    }
    std::vector<size_t> left, right;
    for (size_t r : rows)
      (samples_[r].x[split.dimension] <= split.threshold ? left : right).push_back(r);
    std::vector<double> left_high = high, right_low = low;
    left_high[split.dimension] = split.threshold;
    right_low[split.dimension] = split.threshold;
    grow(left, low, left_high, depth + 1);
    grow(right, right_low, high, depth + 1);
  }

  const std::vector<FanovaSample>& samples_;
  size_t dimensions_;
  std::vector<Leaf> leaves_;
};

double volume(const Leaf& leaf, size_t except) {
  double v = 1;
  for (size_t d = 0; d < leaf.low.size(); ++d)
    if (d != except) v *= leaf.high[d] - leaf.low[d];
  return v;
}

// Each dimension's share of the tree's variance that its marginal explains; empty when the
// tree predicts one value everywhere.
std::vector<double> tree_shares(const std::vector<Leaf>& leaves, size_t dimensions) {
  auto [lowest, highest] = std::minmax_element(
      leaves.begin(), leaves.end(), [](const Leaf& a, const Leaf& b) { return a.value < b.value; });
  if (lowest->value == highest->value) return {};  // one value: no variance to share out
  double mean = 0, variance = 0;
  for (const Leaf& leaf : leaves) mean += volume(leaf, dimensions) * leaf.value;
  for (const Leaf& leaf : leaves)
    variance += volume(leaf, dimensions) * (leaf.value - mean) * (leaf.value - mean);
  if (variance <= 1e-300) return {};
  std::vector<double> shares(dimensions, 0.0);
  for (size_t d = 0; d < dimensions; ++d) {
    std::vector<double> cuts = {0.0, 1.0};
    for (const Leaf& leaf : leaves) {
      cuts.push_back(leaf.low[d]);
      cuts.push_back(leaf.high[d]);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    double explained = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      double middle = (cuts[k] + cuts[k + 1]) / 2, marginal = 0;
      for (const Leaf& leaf : leaves)  // the leaves over this stretch of d tile the others
        if (leaf.low[d] <= middle && middle < leaf.high[d])
          marginal += volume(leaf, d) * leaf.value;
      explained += (cuts[k + 1] - cuts[k]) * (marginal - mean) * (marginal - mean);
    }
    shares[d] = explained / variance;
  }
  return shares;
}

}  // namespace

std::vector<double> fanova_importances(const std::vector<FanovaSample>& samples, size_t dimensions,
                                       int64_t trees, uint64_t seed) {
  if (samples.size() < 2 || dimensions == 0) return {};
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<size_t> pick(0, samples.size() - 1);
  TreeGrower grower(samples, dimensions);
  std::vector<double> sums(dimensions, 0.0);
  int64_t counted = 0;
  for (int64_t t = 0; t < trees; ++t) {
    std::vector<size_t> rows(samples.size());
    for (size_t& r : rows) r = pick(random);  // a bootstrap sample
    std::vector<double> shares = tree_shares(grower.grow(rows), dimensions);
    if (shares.empty()) continue;
    for (size_t d = 0; d < dimensions; ++d) sums[d] += shares[d];
    ++counted;
  }
  double total = std::accumulate(sums.begin(), sums.end(), 0.0);
  if (counted == 0 || total <= 0) return {};
  for (double& s : sums) s /= total;
  return sums;
}

}  // namespace kiln::tune
