// asha: asynchronous successive halving (Li et al., 2018). Rungs stand at min_resource,
// min_resource x reduction, x reduction², ... epochs (or steps). A trial reaching a rung goes on
// only when its value there ranks among the best 1/reduction of every value reported at that rung
// so far (itself included); while fewer than `reduction` trials have reached it, all go on.
// Asynchronous: a trial is judged against those that got there before it, never waits for more.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kiln/tune/pruner.h"

namespace kiln::tune {
namespace {

enum class Resource { kEpochs, kSteps };
EnumNameList<Resource> enum_names(Resource) {
  return {{Resource::kEpochs, "epochs"}, {Resource::kSteps, "steps"}};
}

struct AshaOptions {
  Resource resource = Resource::kEpochs;
  double min_resource = 1;
  double reduction = 3;
  void describe(Schema& s) {
    s.field("resource", resource, "What rungs count: epochs or steps.");
    s.field("min_resource", min_resource, "The first rung.")
        .check([](double v) { return v > 0; }, "> 0");
    s.field("reduction", reduction, "Each rung keeps the best 1/reduction.")
        .check([](double v) { return v >= 2; }, ">= 2");
  }
};

class AshaPruner : public Pruner {
 public:
  explicit AshaPruner(const AshaOptions& options) : options_(options) {}

  std::optional<std::string> prune(int64_t number, const std::vector<TrialRecord>& trials,
                                   bool maximize) const override {
    const TrialRecord& trial = trials.at(size_t(number));
    if (trial.reported.empty()) return std::nullopt;
    bool epochs = options_.resource == Resource::kEpochs;
    const ReportedValue& last = trial.reported.back();
    double reached = epochs ? last.epoch : double(last.step);
    // The highest rung this report reached, judged once: when the report is the first past it.
    double rung = options_.min_resource;
    if (reached < rung - 1e-9) return std::nullopt;
    while (rung * options_.reduction <= reached + 1e-9) rung *= options_.reduction;
    if (trial.reported.size() > 1) {
      const ReportedValue& before = trial.reported[trial.reported.size() - 2];
      if ((epochs ? before.epoch : double(before.step)) >= rung - 1e-9) return std::nullopt;
    }
    double own = *value_at(trial, rung, epochs);
    std::vector<double> at_rung;
    for (const TrialRecord& other : trials)
      if (auto value = value_at(other, rung, epochs)) at_rung.push_back(*value);
    size_t kept = at_rung.size() / size_t(options_.reduction);
    if (kept == 0) return std::nullopt;
    size_t ahead = size_t(std::count_if(at_rung.begin(), at_rung.end(),
                                        [&](double v) { return better(v, own, maximize); }));
    if (ahead < kept) return std::nullopt;
    std::string unit = std::string(epochs ? "epoch" : "step") + (rung == 1 ? "" : "s");
    return fmt::format(
        "asha: {} of the {} trials that reached {} {} did better than {:.6g}; "
        "only the best {} go on",
        ahead, at_rung.size(), rung, unit, own, kept);
  }

 private:
  AshaOptions options_;
};

}  // namespace

KILN_REGISTER(pruner_registry, "asha", AshaPruner, AshaOptions,
              "Asynchronous successive halving: at each rung only the best 1/reduction go on.");

}  // namespace kiln::tune
