#pragma once
// Where logged values go. The trainer sends every value it measures, once, through one
// MetricSink: metrics.csv is the first sink, the console's log lines another, and TensorBoard's
// event files (issue #18) plug in the same way. A resumed run continues from a checkpoint taken
// at some step, so every sink can forget what was logged after it (truncate_after) and the
// values are not logged twice.
// Thread-safety: one thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/run/metrics_csv.h"

namespace kiln {
class Console;
}

namespace kiln::engine {

class MetricSink {
 public:
  virtual ~MetricSink() = default;
  /// One value: tag `split/metric` at `step` (and `epoch`), logged at `wall_time` (seconds since
  /// the epoch).
  virtual void append(int64_t step, double epoch, const std::string& tag, double value,
                      double wall_time) = 0;
  /// The values appended since the last call belong together (one validation, one training log
  /// line); sinks that show them together show them now.
  virtual void end_record() {}
  /// Forgets every value logged after `step`: a resumed run logs them again.
  virtual void truncate_after(int64_t step) = 0;
};

/// Sends every value to each of several sinks, in order.
class MetricSinks : public MetricSink {
 public:
  MetricSinks() = default;
  explicit MetricSinks(std::vector<MetricSink*> sinks) : sinks_(std::move(sinks)) {}
  void add(MetricSink& sink) { sinks_.push_back(&sink); }
  void append(int64_t step, double epoch, const std::string& tag, double value,
              double wall_time) override;
  void end_record() override;
  void truncate_after(int64_t step) override;

 private:
  std::vector<MetricSink*> sinks_;
};

/// metrics.csv as a sink (run/metrics_csv.h writes the rows).
class MetricsLog : public MetricSink {
 public:
  explicit MetricsLog(const std::string& path) : csv_(path) {}
  void append(int64_t step, double epoch, const std::string& tag, double value,
              double wall_time) override {
    csv_.append(step, epoch, tag, value, wall_time);
  }
  /// Rewrites the file without the rows after `step` (and any row a crash cut short).
  void truncate_after(int64_t step) override { csv_.truncate_after(step); }

 private:
  run::MetricsCsv csv_;
};

/// The console's two kinds of value lines: a training line (loss, rate, throughput) for a record
/// with train/samples_per_s, a validation line for one with val/ values. Other values (counts of
/// skipped records, rewinds) come with their own explanations from whoever logs them.
class ConsoleMetricSink : public MetricSink {
 public:
  explicit ConsoleMetricSink(Console& console) : console_(console) {}
  void append(int64_t step, double epoch, const std::string& tag, double value,
              double wall_time) override;
  void end_record() override;
  /// Lines already printed stay printed.
  void truncate_after(int64_t) override {}

 private:
  Console& console_;
  int64_t step_ = 0;
  double epoch_ = 0;
  std::map<std::string, double> values_;  // of the record being appended, by tag
};

/// A sink that keeps nothing: what a process that writes no run folder logs to.
class NullMetricSink : public MetricSink {
 public:
  void append(int64_t, double, const std::string&, double, double) override {}
  void truncate_after(int64_t) override {}
};

}  // namespace kiln::engine
