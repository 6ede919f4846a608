#pragma once
// The monitored metric shared by callbacks that compare results (checkpoint keep_best,
// early_stopping): `monitor` and `mode` default to train.monitor and train.mode.
// Thread-safety: values.

#include <string>
#include <vector>

#include "kiln/core/mode.h"
#include "kiln/core/schema.h"
#include "kiln/engine/callback.h"

namespace kiln::engine {

struct MonitorOptions {
  std::string monitor;                  // "" = train.monitor
  ModeOrAuto mode = ModeOrAuto::kAuto;  // auto = train.mode
  void describe(Schema& s);
};

/// The monitor a callback compares, with train.monitor / train.mode filled in.
struct ResolvedMonitor {
  std::string monitor;
  Mode mode = Mode::kMin;
  /// `options` resolved, the monitor checked against the tags the trainer measures (a
  /// ConfigError at `path`.monitor otherwise).
  ResolvedMonitor(const MonitorOptions& options, const TrainOptions& train,
                  const std::vector<std::string>& monitorable, const std::string& path);
  ResolvedMonitor() = default;
};

}  // namespace kiln::engine
