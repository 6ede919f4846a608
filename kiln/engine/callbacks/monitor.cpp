#include "kiln/engine/callbacks/monitor.h"

#include "kiln/engine/experiment_config.h"

namespace kiln::engine {

void MonitorOptions::describe(Schema& s) {
  s.field("monitor", monitor, "The tag compared, e.g. val/accuracy; empty: train.monitor.");
  s.field("mode", mode, "Whether the monitored tag is better lower or higher; auto: train.mode.")
      .one_of({"auto", "min", "max"});
}

MonitorOptions MonitorOptions::resolved(const TrainOptions& train,
                                        const std::vector<std::string>& monitorable,
                                        const std::string& path) const {
  MonitorOptions out = *this;
  if (out.monitor.empty()) out.monitor = train.monitor;
  if (out.mode == "auto") out.mode = train.mode;
  check_monitor(out.monitor, monitorable, path + ".monitor");
  return out;
}

}  // namespace kiln::engine
