// tpe: the Tree-structured Parzen Estimator (Bergstra et al., 2011; as hyperopt and Optuna use
// it). After `startup` random trials, the finished trials are split into the best `gamma` share
// ("below", at most 25) and the rest; each is modelled by a Parzen estimator, and of `candidates`
// points drawn from the good model the one with the highest ratio good/bad is tried. Parameters
// sharing a condition are modelled jointly (multivariate: one kernel per trial over all of them),
// over the trials where they applied; pruned trials count among the bad ones. The estimator's
// bandwidths and scores: parzen_estimator.h.

#include <algorithm>
#include <cmath>

#include "kiln/tune/parzen_estimator.h"
#include "kiln/tune/sampler.h"

namespace kiln::tune {
namespace {

struct TpeOptions {
  int64_t startup = 10;
  int64_t candidates = 24;
  double gamma = 0.1;
  double prior_weight = 1.0;
  bool multivariate = true;
  void describe(Schema& s) {
    s.field("startup", startup, "Random trials before the estimator takes over.").min(0);
    s.field("candidates", candidates, "Points drawn from the good model per trial.").min(1);
    s.field("gamma", gamma, "Share of the finished trials counted as good (at most 25).")
        .in_range(0, 1);
    s.field("prior_weight", prior_weight, "Weight of the broad prior kernel.").min(0);
    s.field("multivariate", multivariate,
            "Model the parameters of one condition jointly (else each alone).");
  }
};

// Older trials weigh less once there are many (the last 25 weigh 1, earlier ones ramp up to it).
std::vector<double> recency_weights(size_t n) {
  std::vector<double> weights(n, 1.0);
  if (n < 25) return weights;
  size_t ramp = n - 25;
  for (size_t i = 0; i < ramp; ++i)
    weights[i] = 1.0 / double(n) + (1.0 - 1.0 / double(n)) * double(i) / double(ramp);
  return weights;
}

class TpeSampler : public Sampler {
 public:
  TpeSampler(const TpeOptions& options, uint64_t seed) : options_(options), seed_(seed) {}

  std::optional<Assignment> sample(const SearchSpace& space, const std::vector<TrialView>& trials,
                                   int64_t number) override {
    DrawRandom random(seed_, number);
    std::vector<const TrialView*> finished;
    for (const TrialView& t : trials)
      if (t.loss && (t.state == TrialState::kComplete || t.state == TrialState::kPruned))
        finished.push_back(&t);
    if (int64_t(finished.size()) < options_.startup) return sample_uniformly(space, random);
    Assignment out;
    for (const auto& group : groups(space)) {
      if (!space.active(*group.front(), out)) continue;
      std::vector<double> point = sample_group(group, finished, random);
      for (size_t j = 0; j < group.size(); ++j)
        out[group[j]->name] = group[j]->distribution->snap(point[j]);
    }
    return out;
  }

 private:
  std::vector<std::vector<const Parameter*>> groups(const SearchSpace& space) const {
    if (options_.multivariate) return space.groups();
    std::vector<std::vector<const Parameter*>> single;
    for (const Parameter& p : space.parameters()) single.push_back({&p});
    return single;
  }

  std::vector<double> sample_group(const std::vector<const Parameter*>& group,
                                   const std::vector<const TrialView*>& finished,
                                   DrawRandom& random) const {
    // Every finished trial, best first (complete before pruned), split into the good and the
    // bad; of each, the trials where the group applied.
    std::vector<const TrialView*> ranked = finished;
    std::stable_sort(ranked.begin(), ranked.end(), [](const TrialView* a, const TrialView* b) {
      bool a_pruned = a->state == TrialState::kPruned, b_pruned = b->state == TrialState::kPruned;
      return a_pruned != b_pruned ? b_pruned : *a->loss < *b->loss;
    });
    size_t below = std::min<size_t>(25, size_t(std::ceil(options_.gamma * double(ranked.size()))));
    std::vector<const TrialView*> good_trials, bad_trials;
    for (size_t i = 0; i < ranked.size(); ++i)
      if (ranked[i]->assignment.count(group.front()->name))
        (i < below ? good_trials : bad_trials).push_back(ranked[i]);
    ParzenEstimator good = estimator(group, good_trials);
    ParzenEstimator bad = estimator(group, bad_trials);
    std::vector<double> best;
    double best_score = -INFINITY;
    for (int64_t c = 0; c < options_.candidates; ++c) {
      std::vector<double> point = good.sample(random);
      double score = good.log_score(point) - bad.log_score(point);
      if (best.empty() || score > best_score) {
        best = point;
        best_score = score;
      }
    }
    return best;
  }

  // Weighted by recency in trial order.
  ParzenEstimator estimator(const std::vector<const Parameter*>& group,
                            std::vector<const TrialView*> trials) const {
    std::sort(trials.begin(), trials.end(),
              [](const TrialView* a, const TrialView* b) { return a->number < b->number; });
    std::vector<std::vector<double>> points;
    for (const TrialView* t : trials) {
      std::vector<double> point;
      for (const Parameter* p : group) point.push_back(t->assignment.at(p->name));
      points.push_back(point);
    }
    return ParzenEstimator(group, points, recency_weights(points.size()), options_.prior_weight);
  }

  TpeOptions options_;
  uint64_t seed_;
};

}  // namespace

KILN_REGISTER(sampler_registry, "tpe", TpeSampler, TpeOptions,
              "Tree-structured Parzen Estimator: tries what resembles the best trials most.");

}  // namespace kiln::tune
