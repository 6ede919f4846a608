#pragma once
// The monitored metric shared by callbacks that compare results (checkpoint keep_best,
// early_stopping): `monitor` and `mode` default to train.monitor and train.mode.
// Thread-safety: values.

#include <string>
#include <vector>

#include "kiln/core/schema.h"
#include "kiln/engine/callback.h"

namespace kiln::engine {

struct MonitorOptions {
  std::string monitor;        // "" = train.monitor
  std::string mode = "auto";  // auto = train.mode
  void describe(Schema& s);
  /// The options with train.monitor / train.mode filled in, the monitor checked against the
  /// tags the trainer measures (a ConfigError at `path`.monitor otherwise).
  MonitorOptions resolved(const TrainOptions& train, const std::vector<std::string>& monitorable,
                          const std::string& path) const;
};

}  // namespace kiln::engine
