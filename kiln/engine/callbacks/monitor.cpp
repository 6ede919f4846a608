#include "kiln/engine/callbacks/monitor.h"

#include "kiln/engine/train_options.h"

namespace kiln::engine {

void MonitorOptions::describe(Schema& s) {
  s.field("monitor", monitor, "The tag compared, e.g. val/accuracy; empty: train.monitor.");
  s.field("mode", mode, "Whether the monitored tag is better lower or higher; auto: train.mode.");
}

ResolvedMonitor::ResolvedMonitor(const MonitorOptions& options, const TrainOptions& train,
                                 const std::vector<std::string>& monitorable,
                                 const std::string& path)
    : monitor(options.monitor.empty() ? train.monitor : options.monitor),
      mode(resolve_mode(options.mode, train.mode)) {
  check_monitor(monitor, monitorable, path + ".monitor");
}

}  // namespace kiln::engine
