#include "kiln/tune/cma_state.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::tune {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix identity(int64_t n) {
  Matrix m(size_t(n), std::vector<double>(size_t(n), 0.0));
  for (int64_t i = 0; i < n; ++i) m[size_t(i)][size_t(i)] = 1.0;
  return m;
}

bool inside(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return v >= 0.0 && v <= 1.0; });
}

}  // namespace

void symmetric_eigen(Matrix a, std::vector<double>& values, Matrix& vectors) {
  size_t n = a.size();
  vectors = identity(int64_t(n));
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) off += a[p][q] * a[p][q];
    if (off < 1e-30) break;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) {
        if (std::abs(a[p][q]) < 1e-300) continue;
        double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // A <- A J (columns p and q)
          double kp = a[k][p], kq = a[k][q];
          a[k][p] = c * kp - s * kq;
          a[k][q] = s * kp + c * kq;
        }
        for (size_t k = 0; k < n; ++k) {  // A <- J^T A (rows p and q)
          double pk = a[p][k], qk = a[q][k];
          a[p][k] = c * pk - s * qk;
          a[q][k] = s * pk + c * qk;
        }
        for (size_t k = 0; k < n; ++k) {
          double kp = vectors[k][p], kq = vectors[k][q];
          vectors[k][p] = c * kp - s * kq;
          vectors[k][q] = s * kp + c * kq;
        }
      }
  }
  values.resize(n);
  for (size_t i = 0; i < n; ++i) values[i] = a[i][i];
}

CmaState::CmaState(std::vector<double> mean, double sigma, int64_t population)
    : n_(int64_t(mean.size())), mean_(std::move(mean)), sigma_(sigma) {
  double n = double(n_);
  lambda_ = population > 0 ? population : 4 + int64_t(std::floor(3 * std::log(n)));
  lambda_ = std::max<int64_t>(lambda_, 2);
  mu_ = lambda_ / 2;
  // The tutorial's weights of all lambda points (its eq. 49-53): positive for the best mu,
  // summing to 1; negative for the rest (active CMA), scaled so that C stays positive definite.
  std::vector<double> raw;
  double positive = 0, negative = 0, squares = 0, negative_squares = 0;
  for (int64_t i = 1; i <= lambda_; ++i) {
    raw.push_back(std::log((double(lambda_) + 1) / 2) - std::log(double(i)));
    (raw.back() >= 0 ? positive : negative) += raw.back();
    (raw.back() >= 0 ? squares : negative_squares) += raw.back() * raw.back();
  }
  mu_eff_ = positive * positive / squares;
  double mu_eff_minus = negative_squares > 0 ? negative * negative / negative_squares : 0;
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_1_ = 2 / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, 2 * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + mu_eff_));
  double scale_minus = std::min(
      {1 + c_1_ / c_mu_, 1 + 2 * mu_eff_minus / (mu_eff_ + 2), (1 - c_1_ - c_mu_) / (n * c_mu_)});
  for (double w : raw)
    weights_.push_back(w >= 0 ? w / positive : scale_minus * w / std::abs(negative));
  expected_norm_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  c_ = identity(n_);
  b_ = identity(n_);
  d_.assign(size_t(n_), 1.0);
  p_sigma_.assign(size_t(n_), 0.0);
  p_c_.assign(size_t(n_), 0.0);
}

std::vector<double> CmaState::draw(DrawRandom& random) const {
  std::vector<double> x(static_cast<size_t>(n_));
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::vector<double> z(static_cast<size_t>(n_));
    for (double& v : z) v = random.normal();
    for (size_t i = 0; i < size_t(n_); ++i) {
      double y = 0;  // (B D z)_i
      for (size_t j = 0; j < size_t(n_); ++j) y += b_[i][j] * d_[j] * z[j];
      x[i] = mean_[i] + sigma_ * y;
    }
    if (inside(x)) return x;
  }
  for (double& v : x) v = std::clamp(v, 0.0, 1.0);
  return x;
}

std::vector<double> CmaState::whiten(const std::vector<double>& y) const {
  size_t n = y.size();
  std::vector<double> bt(n, 0.0), out(n, 0.0);  // C^(-1/2) y = B D^-1 B^T y
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) bt[j] += b_[i][j] * y[i];
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) out[i] += b_[i][j] * bt[j] / d_[j];
  return out;
}

void CmaState::tell(const std::vector<std::vector<double>>& points,
                    const std::vector<double>& losses) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return losses[a] < losses[b]; });
  size_t n = size_t(n_), count = std::min(points.size(), weights_.size());
  // The weights of the points that came back (fewer than lambda when some did not): the
  // positive ones summing to 1 again.
  std::vector<double> w(weights_.begin(), weights_.begin() + long(count));
  double positive = 0;
  for (double v : w) positive += std::max(v, 0.0);
  for (double& v : w)
    if (v > 0) v /= positive;
  std::vector<std::vector<double>> y(count, std::vector<double>(n));
  std::vector<double> y_w(n, 0.0);
  for (size_t k = 0; k < count; ++k)
    for (size_t i = 0; i < n; ++i) {
      y[k][i] = (points[order[k]][i] - mean_[i]) / sigma_;
      if (w[k] > 0) y_w[i] += w[k] * y[k][i];
    }
  for (size_t i = 0; i < n; ++i) mean_[i] += sigma_ * y_w[i];
  std::vector<double> whitened = whiten(y_w);
  double norm = 0, step = std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_);
  for (size_t i = 0; i < n; ++i) {
    p_sigma_[i] = (1 - c_sigma_) * p_sigma_[i] + step * whitened[i];
    norm += p_sigma_[i] * p_sigma_[i];
  }
  norm = std::sqrt(norm);
  ++generation_;
  double decay = std::sqrt(1 - std::pow(1 - c_sigma_, 2.0 * double(generation_)));
  bool h_sigma = norm / decay < (1.4 + 2 / (double(n) + 1)) * expected_norm_;
  double path = std::sqrt(c_c_ * (2 - c_c_) * mu_eff_);
  for (size_t i = 0; i < n; ++i) p_c_[i] = (1 - c_c_) * p_c_[i] + (h_sigma ? path : 0) * y_w[i];
  // A negative weight is scaled by n / |C^(-1/2) y|^2, so that a far point cannot make C lose
  // its positive definiteness (the tutorial's w°).
  double weight_sum = 0;
  for (size_t k = 0; k < count; ++k) {
    weight_sum += w[k];
    if (w[k] < 0) {
      double length = 0;
      for (double v : whiten(y[k])) length += v * v;
      w[k] *= double(n) / std::max(length, 1e-20);
    }
  }
  double lost = h_sigma ? 0 : c_c_ * (2 - c_c_);
  double keep = 1 + c_1_ * lost - c_1_ - c_mu_ * weight_sum;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double rank_mu = 0;
      for (size_t k = 0; k < count; ++k) rank_mu += w[k] * y[k][i] * y[k][j];
      c_[i][j] = keep * c_[i][j] + c_1_ * p_c_[i] * p_c_[j] + c_mu_ * rank_mu;
    }
  sigma_ *= std::exp((c_sigma_ / d_sigma_) * (norm / expected_norm_ - 1));
  sigma_ = std::clamp(sigma_, 1e-12, 1e3);
  decompose();
}

void CmaState::decompose() {
  std::vector<double> values;
  symmetric_eigen(c_, values, b_);
  for (size_t i = 0; i < values.size(); ++i) d_[i] = std::sqrt(std::max(values[i], 1e-20));
}

}  // namespace kiln::tune
