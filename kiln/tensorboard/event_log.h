#pragma once
// The TensorBoard event files of one run, under RUN/tensorboard/: a directory per split (`train`,
// `val`, `test`), so that TensorBoard draws the training and validation curves of a metric in one
// chart, and the directory itself for the run's hyper-parameters (the HParams tab). Files are
// opened when first written to. After restart_at(step) (a resumed or rewound run) every split
// gets a new file that begins with SessionLog START at that step: TensorBoard then drops the
// points the interrupted process logged from that step on.
// Thread-safety: one thread.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/io/image_codec.h"
#include "kiln/tensorboard/event_file.h"
#include "kiln/tensorboard/graph_def.h"
#include "kiln/tensorboard/histogram.h"
#include "kiln/tensorboard/hparams.h"
#include "kiln/tensorboard/pr_curve.h"

namespace kiln::tensorboard {

class EventLog {
 public:
  /// `directory` is RUN/tensorboard; `writer` names the files (its wall_time is unused).
  EventLog(std::string directory, EventFileName writer);
  ~EventLog();

  void scalar(const std::string& split, const std::string& tag, int64_t step, double value,
              double wall_time);
  void text(const std::string& split, const std::string& tag, int64_t step,
            const std::string& markdown, double wall_time);
  void histogram(const std::string& split, const std::string& tag, int64_t step,
                 const Histogram& histogram, double wall_time);
  void image(const std::string& split, const std::string& tag, int64_t step, const io::Image& image,
             double wall_time);
  void pr_curve(const std::string& split, const std::string& tag, int64_t step,
                const PrCurveCounts& counts, double wall_time);
  /// The model's graph, for TensorBoard's Graphs tab.
  void graph(const std::string& split, const std::vector<GraphNode>& nodes, double wall_time);
  /// The run's hyper-parameters and the metrics to compare runs by: the experiment and the
  /// session's start, in the directory itself.
  void hparams_start(const std::map<std::string, Json>& hparams,
                     const std::vector<HParamsMetric>& metrics, const std::string& name,
                     double wall_time);
  void hparams_end(SessionStatus status, double wall_time);

  /// What was logged reaches the files (and TensorBoard); throws IoError.
  void flush();
  /// Closes every file; the next ones begin with SessionLog START at `step`.
  void restart_at(int64_t step);

  const std::string& directory() const { return directory_; }

 private:
  /// The file of `split` ("" for the directory itself), opened when missing.
  EventFile& file(const std::string& split, double wall_time);

  std::string directory_;
  EventFileName writer_;
  std::map<std::string, std::unique_ptr<EventFile>> files_;
  int64_t start_step_ = -1;
};

}  // namespace kiln::tensorboard
