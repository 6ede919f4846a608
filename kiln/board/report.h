#pragma once
// `kiln report`: the board's page as one self-contained HTML file to mail or archive: Chart.js,
// the runs table and every run's metrics, notes, summary and config are inlined, and the page
// makes no request at all. The table sorts in the page; filtering needs the board.
// Thread-safety: functions of their arguments.

#include <string>

namespace kiln::board {

/// The report of every run under `root`, with Chart.js's code `chart_js` inlined.
std::string report_html(const std::string& root, const std::string& chart_js);

/// The text of Debian's Chart.js (kChartJsPath), or a UsageError naming the package.
std::string read_chart_js(const std::string& path);

}  // namespace kiln::board
