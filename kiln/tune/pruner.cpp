#include "kiln/tune/pruner.h"

namespace kiln::tune {
namespace {

// none: every trial runs to its end.
class NoPruner : public Pruner {
 public:
  explicit NoPruner(const NoOptions&) {}
  std::optional<std::string> prune(int64_t, const std::vector<TrialRecord>&, bool) const override {
    return std::nullopt;
  }
};

}  // namespace

PrunerRegistry& pruner_registry() {
  static PrunerRegistry registry("pruner", "How a study stops unpromising trials early.");
  return registry;
}

KILN_REGISTER(pruner_registry, "none", NoPruner, NoOptions, "Every trial runs to its end.");

std::optional<double> value_at(const TrialRecord& trial, double resource, bool epochs) {
  for (const ReportedValue& r : trial.reported)
    if ((epochs ? r.epoch : double(r.step)) >= resource - 1e-9) return r.value;
  return std::nullopt;
}

}  // namespace kiln::tune
