#include "kiln/board/report.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/board/board_api.h"
#include "kiln/board/board_page.h"
#include "kiln/board/board_studies.h"
#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

namespace kiln::board {
namespace {

// JSON inside a <script>: "</script" would end it early and "<!--" followed by "<script" would
// keep it open past its end (HTML's escaped script states), wherever a string holds them (a
// metric's name, a note). '<' appears in JSON only inside strings, where \u003c means the same.
std::string script_safe_json(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

// Points per tag in a report's charts: a page of one file stays small with runs of any length.
constexpr size_t kReportPoints = 2000;

Json report_data(const std::string& root) {
  Json data = {{"runs", runs_payload(root, {}, "")},
               {"metrics", Json::object()},
               {"texts", Json::object()},
               {"images", Json::object()},
               {"histograms", Json::object()},
               {"details", Json::object()},
               {"studies", studies_payload(root)}};
  for (const Json& run : data["runs"]["runs"]) {
    std::string name = run["run"];
    std::optional<std::string> path = run_under(root, name);
    if (!path) continue;
    data["metrics"][name] = metric_rows(*path, 0, kReportPoints);
    data["details"][name] = run_details(root, {name})["runs"][0];
    data["histograms"][name] = run_histograms(*path);
    Json texts = Json::object();
    for (const char* file : {"notes.md", "summary.json", "config.yaml"}) try {
        if (std::optional<std::string> text = run_text(*path, file)) texts[file] = *text;
      } catch (const Error&) {  // not a regular file: the runs table names the problem
      }
    data["texts"][name] = texts;
    data["images"][name] = run_images(*path);
  }
  return data;
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  KILN_ASSERT(at != std::string::npos);
  text.replace(at, from.size(), to);
}

}  // namespace

std::string read_chart_js(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UsageError(
        fmt::format("{}: missing; kiln draws its charts with Chart.js from Debian's "
                    "libjs-chart.js (apt install libjs-chart.js)",
                    path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string report_html(const std::string& root, const std::string& chart_js) {
  std::string page = board_page();
  replace_once(page, "<title>kiln board</title>", "<title>kiln report</title>");
  if (chart_js.find("</script") != std::string::npos)
    throw UsageError("this Chart.js contains \"</script\" and cannot be inlined into a page");
  replace_once(page, "<script src=\"chart.js\"></script>",
               "<script>" + chart_js + "</script>\n<script>window.KILN_DATA = " +
                   script_safe_json(dump_json(report_data(root))) + ";</script>");
  return page;
}

}  // namespace kiln::board
