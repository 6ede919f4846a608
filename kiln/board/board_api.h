#pragma once
// What `kiln board` serves about a runs tree, as JSON, and the checks that keep it inside the
// tree: runs are named by their path relative to the board's root, and a name that resolves
// outside it (`..`, an absolute path, a symbolic link out) names no run. Read from the run
// folders' files on each request, so the page follows runs while they train.
// Thread-safety: functions of their arguments; they only read files.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/run/run_query.h"

namespace kiln::board {

/// The run folder `relative` names under `root`, or nothing when it leaves the root or is not a
/// run folder.
std::optional<std::string> run_under(const std::string& root, const std::string& relative);

class RunLinks;

/// The run folders under `root` that are inside it (not reached through a link out of it, and
/// holding none out of it); `links` keeps what it can between calls.
std::vector<std::string> runs_inside(const std::string& root, RunLinks* links = nullptr);

/// The runs table: {"columns": [...], "runs": [{"run": relative path, "cells": [...],
/// "status", "problems": [...]}], "keys": every key a filter or sort may name}.
Json runs_payload(const std::string& root, const std::vector<run::RunFilter>& filters,
                  const std::string& sort);
/// The same of runs already read (`all`: runs_inside(root), read).
Json runs_table_payload(const std::string& root, const std::vector<run::RunInfo>& all,
                        const std::vector<run::RunFilter>& filters, const std::string& sort);

/// metrics.csv's whole rows from byte `from` on, a tag's rows together (tags in the order they
/// first appear, each tag's rows in file order): {"rows": [[step, epoch, "split/metric", value,
/// wall_time], ...], "next": the byte after the last whole row}. A row still being written is
/// left for the next request; a `from` past the end or not at the start of a row (the file was
/// cut back by a resume) starts again from 0, said by "restart": true. A metrics.csv that is not
/// a regular file gives no rows and "problem".
/// With `max_points` > 0, a tag of more rows than that is thinned as it is read: of each run of
/// its consecutive rows (max_points / 4 to max_points / 2 runs of equal length), the one of the
/// lowest and of the highest value (so a spike stays in the chart), and its first and last row;
/// "downsampled": true then. A million rows become a chart's worth, in bounded memory.
/// `max_points` is at most kMaxPointsPerTag, 0 (every row) included: a 214 MB metrics.csv sent
/// whole took the board to 2.3 GB for one request.
constexpr size_t kMaxPointsPerTag = 100000;
Json metric_rows(const std::string& run, int64_t from, size_t max_points = 0);

/// What the compare view shows of each run: {"runs": [{"run", "status", "hparams": {dotted
/// config path: value}, "final": {tag: value}, "notes", "problems"}]}; a name that is no run
/// under `root` is left out.
Json run_details(const std::string& root, const std::vector<std::string>& runs);

/// The run's weight and gradient histograms (RUN/tensorboard/train) as heat maps over steps:
/// {"histograms": [{"tag", "steps": [...], "low", "high", "counts": [[kHistogramBins counts from
/// low to high] per step]}], "problems": [damaged files or histograms]}. At most the last
/// kHistogramSteps steps of each tag.
Json run_histograms(const std::string& run);
constexpr int kHistogramBins = 30;
constexpr size_t kHistogramSteps = 200;

/// The latest image of each tag the run logged for TensorBoard (RUN/tensorboard/val: the
/// validation samples and confusion matrix): {"images": [{"tag", "step", "png": base64}],
/// "problems": [damaged event files]}.
Json run_images(const std::string& run);

/// The text of one of the run's own files: config.yaml, notes.md, summary.json, run.json or
/// train.log; nothing for any other name or a missing file. UsageError for a file that is not a
/// regular one (a device, a pipe, a folder).
std::optional<std::string> run_text(const std::string& run, const std::string& name);

}  // namespace kiln::board
