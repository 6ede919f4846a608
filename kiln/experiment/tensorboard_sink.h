#pragma once
// Logged values into TensorBoard's event files, the split of a tag choosing its directory as
// Keras does: `val/accuracy` is `accuracy` in RUN/tensorboard/val/, beside `accuracy` in train/,
// so that TensorBoard draws both curves in one chart. A tag of no split goes to train/ whole.
// Values are flushed at the end of each record (a log line, a validation), so TensorBoard shows
// them at once and a killed process loses none that metrics.csv has.
// Thread-safety: one thread.

#include "kiln/engine/metric_sink.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

class TensorBoardSink : public engine::MetricSink {
 public:
  explicit TensorBoardSink(tensorboard::EventLog& log) : log_(log) {}
  void append(int64_t step, double epoch, const std::string& tag, double value,
              double wall_time) override;
  void end_record() override { log_.flush(); }
  /// Event files cannot be cut short: new ones begin with SessionLog START at step + 1, and
  /// TensorBoard drops what the old ones hold from there on.
  void truncate_after(int64_t step) override { log_.restart_at(step + 1); }

 private:
  tensorboard::EventLog& log_;
};

}  // namespace kiln::experiment
