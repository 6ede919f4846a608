#include "kiln/distributed/context.h"

namespace kiln::distributed {

bool Context::any(bool local) { return max(local ? 1.0 : 0.0) > 0; }

double Context::max(double local) {
  std::vector<double> values = {local};
  all_reduce(values, ReduceOp::kMax);
  return values[0];
}

std::shared_ptr<Context> single_process() {
  static const std::shared_ptr<Context> alone = std::make_shared<Context>();
  return alone;
}

}  // namespace kiln::distributed
