#pragma once
// Tagged values, as objectives report them and checkpoints keep the latest of them; torch-free.

#include <map>
#include <string>

namespace kiln::engine {

/// Tagged values, e.g. {"val/accuracy": 0.91, "val/loss": 0.25}.
using MetricValues = std::map<std::string, double>;

}  // namespace kiln::engine
