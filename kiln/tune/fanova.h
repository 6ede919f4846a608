#pragma once
// Parameter importance by fANOVA (Hutter, Hoos & Leyton-Brown, "An Efficient Approach for
// Assessing Hyperparameter Importance", 2014), as Optuna's default importance evaluator computes
// it: a random forest of regression trees (64 trees, each on a bootstrap sample of the trials,
// every parameter tried at every split, a split minimising the squared error, leaves of at least
// one trial, depth at most 64) fitted to the complete trials' values over their parameters'
// search coordinates scaled to [0, 1]; then, for each tree, the variance of each parameter's
// marginal prediction (the tree's prediction averaged over all the other parameters, uniformly
// over the space) as a share of the tree's total variance, averaged over the trees and scaled to
// sum to 1. Only the parameters every complete trial has take part (Optuna's intersection
// search space). A choice is one coordinate, its values' indices in order (Optuna one-hot
// encodes it), so a tree splits its values into two runs of indices.
// Torch-free. Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tune {

/// One row of the forest's data: the parameters' coordinates in [0, 1], and the value.
struct FanovaSample {
  std::vector<double> x;
  double value = 0;
};

/// The importance of each of `dimensions` coordinates by fANOVA over `samples` (a forest of
/// `trees`, seeded by `seed`); empty with fewer than 2 samples or when every value is the same.
std::vector<double> fanova_importances(const std::vector<FanovaSample>& samples, size_t dimensions,
                                       int64_t trees = 64, uint64_t seed = 0);

}  // namespace kiln::tune
