#include "kiln/tune/distribution.h"

namespace kiln::tune {

DistributionRegistry& distribution_registry() {
  static DistributionRegistry registry("distribution",
                                       "How a tuned parameter's values are drawn (tune.space).");
  return registry;
}

}  // namespace kiln::tune
