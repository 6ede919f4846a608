#include "kiln/tensorboard/event_log.h"

#include "kiln/tensorboard/proto/event.pb.h"
#include "kiln/tensorboard/summaries.h"

namespace kiln::tensorboard {

EventLog::EventLog(std::string directory, EventFileName writer)
    : directory_(std::move(directory)), writer_(std::move(writer)) {}

EventLog::~EventLog() {
  try {
    flush();
  } catch (const std::exception&) {
    // A destructor cannot report it; flush() before destruction does.
  }
}

EventFile& EventLog::file(const std::string& split, double wall_time) {
  std::unique_ptr<EventFile>& file = files_[split];
  if (!file) {
    EventFileName name = writer_;
    name.wall_time = wall_time;
    file = std::make_unique<EventFile>(split.empty() ? directory_ : directory_ + "/" + split, name);
    if (start_step_ >= 0) file->write(session_start_event(start_step_, wall_time));
  }
  return *file;
}

void EventLog::scalar(const std::string& split, const std::string& tag, int64_t step, double value,
                      double wall_time) {
  file(split, wall_time).write(scalar_event(tag, step, wall_time, value));
}

void EventLog::text(const std::string& split, const std::string& tag, int64_t step,
                    const std::string& markdown, double wall_time) {
  file(split, wall_time).write(text_event(tag, step, wall_time, markdown));
}

void EventLog::histogram(const std::string& split, const std::string& tag, int64_t step,
                         const Histogram& histogram, double wall_time) {
  file(split, wall_time).write(histogram_event(tag, step, wall_time, histogram));
}

void EventLog::image(const std::string& split, const std::string& tag, int64_t step,
                     const io::Image& image, double wall_time) {
  file(split, wall_time).write(image_event(tag, step, wall_time, image));
}

void EventLog::pr_curve(const std::string& split, const std::string& tag, int64_t step,
                        const PrCurveCounts& counts, double wall_time) {
  file(split, wall_time).write(pr_curve_event(tag, step, wall_time, counts));
}

void EventLog::graph(const std::string& split, const std::vector<GraphNode>& nodes,
                     double wall_time) {
  file(split, wall_time).write(graph_event(nodes, wall_time));
}

void EventLog::hparams_start(const std::map<std::string, Json>& hparams,
                             const std::vector<HParamsMetric>& metrics, const std::string& name,
                             double wall_time) {
  EventFile& run = file("", wall_time);
  run.write(hparams_experiment_event(hparams, metrics, name, wall_time));
  run.write(hparams_session_start_event(hparams, "", wall_time));
  run.flush();
}

void EventLog::hparams_end(SessionStatus status, double wall_time) {
  EventFile& run = file("", wall_time);
  run.write(hparams_session_end_event(status, wall_time));
  run.flush();
}

void EventLog::flush() {
  for (auto& [split, file] : files_)
    if (file) file->flush();
}

void EventLog::restart_at(int64_t step) {
  flush();
  files_.clear();
  start_step_ = step;
}

}  // namespace kiln::tensorboard
