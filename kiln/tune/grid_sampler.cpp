// grid: every combination of the parameters' grid points (a choice's every value, an int's every
// value up to `points`, `points` values spread evenly over a range on its scale), one per trial,
// in order or shuffled; a conditional parameter only in the combinations where it applies.

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kiln/core/error.h"
#include "kiln/tune/sampler.h"

namespace kiln::tune {
namespace {

struct GridOptions {
  int64_t points = 5;
  std::map<std::string, int64_t> points_of;
  bool shuffle = false;
  void describe(Schema& s) {
    s.field("points", points, "Grid points of a real or int range (a choice: all its values).")
        .min(1);
    s.field("points_of", points_of, "Points of single parameters, by name ({optimizer.lr: 3}).");
    s.field("shuffle", shuffle, "Visit the combinations in a seeded random order.");
  }
};

class GridSampler : public Sampler {
 public:
  GridSampler(const GridOptions& options, uint64_t seed) : options_(options), seed_(seed) {}

  std::optional<Assignment> sample(const SearchSpace& space, const std::vector<TrialView>&,
                                   int64_t number) override {
    if (!combinations_) enumerate(space);
    if (number >= int64_t(combinations_->size())) return std::nullopt;
    return (*combinations_)[size_t(order_[size_t(number)])];
  }

 private:
  void enumerate(const SearchSpace& space) {
    for (const auto& named : options_.points_of) {
      const std::string& name = named.first;  // a structured binding cannot be captured (C++17)
      const auto& ps = space.parameters();
      if (std::none_of(ps.begin(), ps.end(), [&](const Parameter& p) { return p.name == name; }))
        throw ConfigError("points_of." + name, "", "is not a parameter of tune.space");
    }
    combinations_.emplace();
    extend(space, 0, {});
    order_.resize(combinations_->size());
    std::iota(order_.begin(), order_.end(), 0);
    if (!options_.shuffle) return;
    DrawRandom random(seed_, -1);
    for (size_t i = order_.size(); i > 1; --i)
      std::swap(order_[i - 1], order_[size_t(random.below(int64_t(i)))]);
  }

  // Every combination of the parameters from `index` on, after `so_far`.
  void extend(const SearchSpace& space, size_t index, const Assignment& so_far) {
    if (index == space.parameters().size()) return combinations_->push_back(so_far);
    const Parameter& p = space.parameters()[index];
    if (!space.active(p, so_far)) return extend(space, index + 1, so_far);
    auto own = options_.points_of.find(p.name);
    for (double coordinate :
         p.distribution->grid(own == options_.points_of.end() ? options_.points : own->second)) {
      Assignment next = so_far;
      next[p.name] = coordinate;
      extend(space, index + 1, next);
    }
  }

  GridOptions options_;
  uint64_t seed_;
  std::optional<std::vector<Assignment>> combinations_;
  std::vector<int64_t> order_;
};

}  // namespace

KILN_REGISTER(sampler_registry, "grid", GridSampler, GridOptions,
              "Every combination of the parameters' grid points, one per trial.");

}  // namespace kiln::tune
