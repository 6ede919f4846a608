#include "kiln/tune/trial_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

namespace kiln::tune {
namespace {

constexpr size_t kPiece = 64 * 1024;
constexpr int kPollMs = 100, kEndWaitMs = 5000;
// Read from the pipe or the metrics file in one call, at most: a program that writes without
// end (or a file that grows as fast as it is read) must not keep the study from its other trials.
constexpr size_t kMostPerCall = 16 * kPiece;

}  // namespace

std::vector<std::pair<int64_t, std::string>> LineSplitter::add(const char* bytes, size_t size) {
  std::vector<std::pair<int64_t, std::string>> lines;
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] == '\n') {
      if (!skipping_) lines.emplace_back(++lines_, std::move(partial_));
      skipping_ = false;
      partial_.clear();
      continue;
    }
    if (skipping_) continue;
    partial_ += bytes[i];
    if (partial_.size() > kMaxMetricLine) {  // judged as it is: too long to be a report
      lines.emplace_back(++lines_, std::move(partial_));
      partial_.clear();
      skipping_ = true;
    }
  }
  return lines;
}

std::vector<std::pair<int64_t, std::string>> LineSplitter::end() {
  std::vector<std::pair<int64_t, std::string>> lines;
  if (!partial_.empty() && !skipping_) lines.emplace_back(++lines_, std::move(partial_));
  partial_.clear();
  return lines;
}

TrialOutput::TrialOutput(int pipe, const std::string& log, std::string log_name,
                         std::string metrics, std::string metrics_name, int64_t max_log_bytes)
    : pipe_(pipe),
      log_(std::fopen(log.c_str(), "ae")),
      log_name_(std::move(log_name)),
      metrics_(std::move(metrics)),
      metrics_name_(std::move(metrics_name)),
      max_log_bytes_(max_log_bytes) {
  ::fcntl(pipe_, F_SETFL, ::fcntl(pipe_, F_GETFL) | O_NONBLOCK);
  if (!log_) {
    ::close(pipe_);
    throw Error(fmt::format("kiln tune: cannot write {}: {}", log, std::strerror(errno)));
  }
}

TrialOutput::~TrialOutput() {
  if (pipe_ >= 0) ::close(pipe_);
  std::fclose(log_);
}

std::vector<MetricReport> TrialOutput::read() {
  std::vector<MetricReport> reports;
  try {
    read_pipe(reports);
    read_metrics(reports, false);
  } catch (const Error&) {
    judged_ = true;
    throw;
  }
  return reports;
}

std::vector<MetricReport> TrialOutput::read_to_end(bool metrics_too) {
  try {
    return read_all(metrics_too);
  } catch (const Error&) {
    judged_ = true;
    throw;
  }
}

std::vector<MetricReport> TrialOutput::read_all(bool metrics_too) {
  std::vector<MetricReport> reports;
  // The program has ended: what it wrote is in the pipe, then its end; unless a process it left
  // behind (outside its group) holds the pipe open, which is waited for a few seconds only.
  for (int waited = 0; pipe_ >= 0 && waited < kEndWaitMs; waited += kPollMs) {
    pollfd ready{pipe_, POLLIN, 0};
    ::poll(&ready, 1, kPollMs);
    read_pipe(reports);
  }
  for (auto& [number, line] : output_lines_.end()) take_output_line(number, line, reports);
  if (metrics_too) read_metrics(reports, true);
  return reports;
}

void TrialOutput::read_pipe(std::vector<MetricReport>& reports) {
  char buffer[kPiece];
  for (size_t taken = 0; pipe_ >= 0 && taken < kMostPerCall;) {
    ssize_t got = ::read(pipe_, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) {  // its end (or an error, which ends it too)
      ::close(pipe_);
      pipe_ = -1;
      return;
    }
    taken += size_t(got);
    write_log(buffer, size_t(got));
    for (auto& [number, line] : output_lines_.add(buffer, size_t(got)))
      take_output_line(number, line, reports);
  }
}

void TrialOutput::write_log(const char* bytes, size_t size) {
  if (log_bytes_ >= max_log_bytes_) return;
  size_t kept = size_t(std::min<int64_t>(int64_t(size), max_log_bytes_ - log_bytes_));
  std::fwrite(bytes, 1, kept, log_);
  log_bytes_ += int64_t(kept);
  if (log_bytes_ >= max_log_bytes_)
    std::fprintf(log_,
                 "\n[kiln tune: the log stops here, after %lld bytes; the output is still "
                 "read for reports]\n",
                 static_cast<long long>(max_log_bytes_));
  std::fflush(log_);
}

void TrialOutput::count_report() {
  if (++reports_ > kMaxReports)
    throw Error(fmt::format("more than {} reports; kiln records at most that many of a trial",
                            kMaxReports));
}

void TrialOutput::take_output_line(int64_t number, const std::string& line,
                                   std::vector<MetricReport>& reports) {
  if (judged_) return;
  try {
    if (std::optional<MetricReport> report = parse_metric_line(line)) {
      count_report();
      return reports.push_back(std::move(*report));
    }
  } catch (const Error& e) {
    throw Error(fmt::format("{} line {}: {}", log_name_, number, e.what()));
  }
  if (!line.empty()) last_line_ = line;
}

void TrialOutput::read_metrics(std::vector<MetricReport>& reports, bool to_end) {
  if (judged_) return;
  // Only as the regular file kiln made: a FIFO left in its place blocked the study in open(), a
  // link to /dev/zero spun it forever. O_NOFOLLOW refuses a link, O_NONBLOCK a FIFO's wait.
  int fd = ::open(metrics_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) return;  // the program removed it: nothing to read
  struct stat status {};
  bool kilns = fd >= 0 && ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
               (!made_ || std::make_pair(status.st_dev, status.st_ino) == *made_);
  if (!kilns) {
    if (fd >= 0) ::close(fd);
    throw Error(
        fmt::format("{} is no longer the regular file kiln made for the trial (a link, a "
                    "FIFO, a device or another file took its place); kiln reads "
                    "KILN_METRICS_FILE only as the file it made: append to it",
                    metrics_name_));
  }
  char buffer[kPiece];
  // To the size it had when opened, a bounded piece at a time; what grows meanwhile waits.
  auto end = int64_t(status.st_size);
  for (size_t taken = 0; metrics_offset_ < end && (to_end || taken < kMostPerCall);) {
    size_t want = size_t(std::min<int64_t>(int64_t(sizeof buffer), end - metrics_offset_));
    ssize_t got = ::pread(fd, buffer, want, metrics_offset_);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    taken += size_t(got);
    metrics_offset_ += got;
    for (auto& [number, line] : metrics_lines_.add(buffer, size_t(got)))
      take_metrics_line(number, line, reports);
  }
  ::close(fd);
  if (to_end)
    for (auto& [number, line] : metrics_lines_.end()) take_metrics_line(number, line, reports);
}

void TrialOutput::take_metrics_line(int64_t number, const std::string& line,
                                    std::vector<MetricReport>& reports) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;
  try {
    if (line.size() > kMaxMetricLine)
      throw Error(fmt::format("a line of more than {} bytes", kMaxMetricLine));
    MetricReport report = parse_metric_record(parse_json_text(line));
    count_report();
    reports.push_back(std::move(report));
  } catch (const JsonTextError& e) {
    throw Error(fmt::format("{} line {}: not JSON: {}", metrics_name_, number, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{} line {}: {}", metrics_name_, number, e.what()));
  }
}

}  // namespace kiln::tune
