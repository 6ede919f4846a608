#pragma once
// The state of a CMA-ES (covariance matrix adaptation evolution strategy; Hansen, "The CMA
// Evolution Strategy: A Tutorial", 2016) over [0, 1]^n: a normal distribution (mean, step size
// sigma, covariance C) from which each generation's lambda points are drawn, moved after each
// generation towards its best mu points and away from its worst (active CMA) with the tutorial's
// default weights and learning rates.
// Points are drawn inside the box: a draw outside is drawn again, up to 100 times, then clipped
// (as the `cmaes` package Optuna uses does).
// Torch-free. Thread-safety: a value.

#include <cstdint>
#include <vector>

#include "kiln/tune/sampler.h"

namespace kiln::tune {

class CmaState {
 public:
  /// Centred on `mean` with step size `sigma`; `population` 0 takes the tutorial's
  /// 4 + floor(3 ln n).
  CmaState(std::vector<double> mean, double sigma, int64_t population = 0);

  int64_t dimensions() const { return int64_t(mean_.size()); }
  int64_t population() const { return lambda_; }
  int64_t generation() const { return generation_; }
  const std::vector<double>& mean() const { return mean_; }
  double sigma() const { return sigma_; }

  /// A point of the current distribution, drawn with `random`, inside [0, 1]^n.
  std::vector<double> draw(DrawRandom& random) const;
  /// Ends a generation: `points` (at least 2) and their losses, lower better.
  void tell(const std::vector<std::vector<double>>& points, const std::vector<double>& losses);

 private:
  void decompose();
  /// C^(-1/2) y.
  std::vector<double> whiten(const std::vector<double>& y) const;

  int64_t n_, lambda_, mu_;
  std::vector<double> weights_;
  double mu_eff_, c_sigma_, d_sigma_, c_c_, c_1_, c_mu_, expected_norm_;
  std::vector<double> mean_;
  double sigma_;
  std::vector<std::vector<double>> c_, b_;  // covariance; its eigenvectors (columns)
  std::vector<double> d_;                   // square roots of its eigenvalues
  std::vector<double> p_sigma_, p_c_;
  int64_t generation_ = 0;
};

/// The eigenvalues and eigenvectors (columns of `vectors`) of the symmetric matrix `matrix`, by
/// Jacobi rotations.
void symmetric_eigen(std::vector<std::vector<double>> matrix, std::vector<double>& values,
                     std::vector<std::vector<double>>& vectors);

}  // namespace kiln::tune
