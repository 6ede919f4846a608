// cmaes: CMA-ES (cma_state.h) for spaces of numbers, as Optuna's CmaEsSampler: trials run in
// generations of `population`, each drawn from the distribution that the generations before
// them moved; the search starts at the middle of the space with a step of `sigma0` of each
// parameter's range (its search coordinate: a loguniform's logarithm, an int's value). The
// sampler keeps no state: it replays the study's finished generations, so a study resumed, or
// run one trial at a time, draws the same. A generation's trials still running (parallel) or
// failed are left out of its update; pruned ones too (their values are not final). Choices (and
// so conditions, which hang on them) have no place in a CMA-ES: a space with one is refused.

#include <fmt/format.h>

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/tune/cma_state.h"
#include "kiln/tune/sampler.h"

namespace kiln::tune {
namespace {

struct CmaesOptions {
  double sigma0 = 1.0 / 6;
  int64_t population = 0;
  int64_t startup = 0;
  void describe(Schema& s) {
    s.field("sigma0", sigma0, "The first step, as a share of each parameter's range.")
        .in_range(1e-6, 1);
    s.field("population", population, "Trials per generation; 0: 4 + floor(3 ln n).").min(0);
    s.field("startup", startup, "Random trials before the first generation.").min(0);
  }
};

class CmaesSampler : public Sampler {
 public:
  CmaesSampler(const CmaesOptions& options, uint64_t seed) : options_(options), seed_(seed) {}

  std::optional<Assignment> sample(const SearchSpace& space, const std::vector<TrialView>& trials,
                                   int64_t number) override {
    refuse_unless_numbers(space);
    DrawRandom random(seed_, number);
    if (number < options_.startup) return sample_uniformly(space, random);
    const std::vector<Parameter>& parameters = space.parameters();
    CmaState state(std::vector<double>(parameters.size(), 0.5), options_.sigma0,
                   options_.population);
    int64_t generation = (number - options_.startup) / state.population();
    for (int64_t g = 0; g < generation; ++g) tell_generation(state, g, parameters, trials);
    std::vector<double> x = state.draw(random);
    Assignment out;
    for (size_t i = 0; i < parameters.size(); ++i) {
      const Distribution& d = *parameters[i].distribution;
      out[parameters[i].name] = d.snap(d.low() + x[i] * (d.high() - d.low()));
    }
    return out;
  }

 private:
  static void refuse_unless_numbers(const SearchSpace& space) {
    // Conditions hang on choices, so a space without a choice has none either.
    for (const Parameter& p : space.parameters())
      if (p.distribution->choices() > 0)
        throw ConfigError("tune.sampler", "",
                          fmt::format("cmaes searches numbers: {} is a choice (use tpe for "
                                      "choices and the conditional spaces they make)",
                                      p.name));
  }

  // Updates `state` with generation `g`'s finished trials (those numbered in its range).
  void tell_generation(CmaState& state, int64_t g, const std::vector<Parameter>& parameters,
                       const std::vector<TrialView>& trials) const {
    int64_t first = options_.startup + g * state.population();
    std::vector<std::vector<double>> points;
    std::vector<double> losses;
    for (const TrialView& t : trials) {
      if (t.number < first || t.number >= first + state.population()) continue;
      if (t.state != TrialState::kComplete || !t.loss) continue;
      std::vector<double> x;
      for (const Parameter& p : parameters) {
        auto found = t.assignment.find(p.name);
        if (found == t.assignment.end()) break;
        const Distribution& d = *p.distribution;
        x.push_back((found->second - d.low()) / (d.high() - d.low()));
      }
      if (x.size() != parameters.size()) continue;
      points.push_back(std::move(x));
      losses.push_back(*t.loss);
    }
    if (points.size() >= 2) state.tell(points, losses);
  }

  CmaesOptions options_;
  uint64_t seed_;
};

}  // namespace

KILN_REGISTER(sampler_registry, "cmaes", CmaesSampler, CmaesOptions,
              "CMA-ES over spaces of numbers (no choices or conditions), as Optuna's "
              "CmaEsSampler.");

}  // namespace kiln::tune
