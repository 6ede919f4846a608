#pragma once
// The HParams plugin's three summaries (docs/formats.md §3.5), as TensorBoard's
// HParams tab reads them from a run's directory: the experiment (which hyper-parameters and
// metrics there are), the session's start (this run's values) and its end (how it ended).
// TensorBoard takes the experiment from whichever run it finds first, so every kiln run writes
// one for its own hyper-parameters, and runs of one config compare in one table.
// Thread-safety: functions of their arguments.

#include <map>
#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln::tensorboard {

namespace proto {
class Event;
}

/// How a run ended, as the HParams tab shows it.
enum class SessionStatus { kUnknown = 0, kSuccess = 1, kFailure = 2, kRunning = 3 };

/// A metric of the experiment: `group` is the run's subdirectory it is logged in ("val"), `tag`
/// its name there ("accuracy").
struct HParamsMetric {
  std::string group, tag;
};

/// Hyper-parameters are numbers, strings or booleans; anything else is written as its JSON text.
proto::Event hparams_experiment_event(const std::map<std::string, Json>& hparams,
                                      const std::vector<HParamsMetric>& metrics,
                                      const std::string& name, double wall_time);
proto::Event hparams_session_start_event(const std::map<std::string, Json>& hparams,
                                         const std::string& group, double wall_time);
proto::Event hparams_session_end_event(SessionStatus status, double wall_time);

/// The scalar leaves of a config, by dotted path (`optimizer.lr`); lists by their JSON text.
std::map<std::string, Json> flatten_hparams(const Json& config);

}  // namespace kiln::tensorboard
