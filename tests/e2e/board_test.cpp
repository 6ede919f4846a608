// End-to-end: `kiln board` over a runs tree of two trained runs and a damaged one, opened in a
// real browser (Debian's chromium, headless): the page lists the runs and draws their curves.
// The screenshot it takes is kept as build/board_screenshot.png (docs/observe.md shows it).
// Skipped, saying so, where chromium is not installed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kiln/io/image_codec.h"
#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kConfig = R"(
version: 1
name: board
seed: 3
data:
  train: {type: fashion_mnist, split: train, limit: 512}
  val: {type: fashion_mnist, split: test, limit: 128}
  batch_size: 32
model:
  type: sequential
  layers: [flatten, {type: linear, out: 16}, relu, {type: linear, out: 10}]
optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
train: {max: 3 epochs, validate_every: 1 epoch, log_every: 4 steps}
runtime: {threads: 1}
)";

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// Pixels of exactly `colour` (the page's first two curve colours are #1f77b4 and #d62728).
int64_t pixels_of(const io::Image& image, uint8_t r, uint8_t g, uint8_t b) {
  int64_t count = 0;
  for (size_t i = 0; i + 2 < image.pixels.size(); i += static_cast<size_t>(image.channels))
    count += image.pixels[i] == r && image.pixels[i + 1] == g && image.pixels[i + 2] == b;
  return count;
}

// How many rows apart the highest and lowest pixels of exactly `colour` are: the legend's box of
// a run's colour is one band about 12 rows high; anything drawn in the chart lies above it.
int64_t rows_spanned(const io::Image& image, uint8_t r, uint8_t g, uint8_t b) {
  int64_t first = -1, last = -1;
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = 0; x < image.width; ++x) {
      size_t i = size_t((y * image.width + x) * image.channels);
      if (image.pixels[i] == r && image.pixels[i + 1] == g && image.pixels[i + 2] == b) {
        if (first < 0) first = y;
        last = y;
      }
    }
  return first < 0 ? 0 : last - first;
}

class BoardInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::run_command("command -v chromium").exit_code != 0)
      GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
    std::string config = dir_.write("board.yaml", kConfig);
    for (const char* lr : {"0.05", "0.01"}) {
      auto run = testing::run_command(kiln("train " + config + " --quiet --runs-root " +
                                           dir_.file("runs") + " --set optimizer.lr=" + lr));
      ASSERT_EQ(run.exit_code, 0) << run.err;
    }
    fs::create_directories(dir_.file("runs/broken/20260101-000000"));
    dir_.write("runs/broken/20260101-000000/run.json", "{\"status\": \"fini");
  }

  // Opens the page in headless chromium, after 5 s of the page's own (virtual) time.
  testing::CommandResult browse(const std::string& url, const std::string& what) {
    return testing::run_command(
        "chromium --headless --no-sandbox --disable-gpu --window-size=1400,900 "
        "--virtual-time-budget=5000 " +
        what + " '" + url + "' 2>/dev/null");
  }

  testing::TempDir dir_;
};

TEST_F(BoardInBrowser, ListsTheRunsAndDrawsTheirCurves) {
  testing::ChildProcess board(kiln("board " + dir_.file("runs") + " --port 0"));
  std::string line;
  ASSERT_TRUE(board.read_line(line));
  ASSERT_THAT(line, ::testing::MatchesRegex("kiln board: http://127\\.0\\.0\\.1:[0-9]+/ over .*"));
  std::string url = line.substr(12, line.find(" over ") - 12);

  testing::CommandResult dom = browse(url, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("(3 runs)"));
  EXPECT_THAT(dom.out, HasSubstr("<tr data-run=\"board/"));
  EXPECT_THAT(dom.out, HasSubstr("class=\"damaged\""));
  EXPECT_THAT(dom.out, HasSubstr("optimizer.lr")) << "the config value that differs";
  EXPECT_THAT(dom.out, ::testing::ContainsRegex("data-points=\"[1-9][0-9]*\""))
      << "the chart holds points";
  // The first run's details: its config and its last validation's images.
  EXPECT_THAT(dom.out, HasSubstr("<h4>config.yaml</h4>"));
  EXPECT_THAT(dom.out, HasSubstr("<img alt=\"samples\" src=\"data:image/png;base64,"));
  EXPECT_THAT(dom.out, HasSubstr("<img alt=\"confusion_matrix\""));

  std::string shot = std::string(KILN_BUILD_DIR) + "/board_screenshot.png";
  fs::remove(shot);
  ASSERT_EQ(browse(url, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(pixels_of(image, 0x1f, 0x77, 0xb4), 100) << "the first run's curve";
  EXPECT_GT(pixels_of(image, 0xd6, 0x27, 0x28), 100) << "the second run's curve";

  board.signal(SIGTERM);
  EXPECT_EQ(board.wait(), 0);
}

// A run that logged its metric once: a line needs two points, so the one point is drawn as a dot
// (it was invisible). The run is written by hand, as the board reads any run folder.
TEST(BoardInBrowserAlone, ASeriesOfOnePointIsDrawn) {
  if (testing::run_command("command -v chromium").exit_code != 0)
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  testing::TempDir dir;
  std::string run = "runs/once/20261128-000000/";
  dir.write(run + "run.json", R"({"status": "finished", "start_time": "2026-11-28T00:00:00Z"})");
  dir.write(run + "config.yaml", "name: once\n");
  dir.write(run + "metrics.csv", "step,epoch,split,metric,value,wall_time\n10,1,val,loss,0.5,1\n");
  testing::ChildProcess board(kiln("board " + dir.file("runs") + " --port 0"));
  std::string line;
  ASSERT_TRUE(board.read_line(line));
  std::string url = line.substr(12, line.find(" over ") - 12);
  std::string shot = std::string(KILN_BUILD_DIR) + "/board_one_point.png";
  fs::remove(shot);
  auto taken = testing::run_command(
      "chromium --headless --no-sandbox --disable-gpu --window-size=1400,900 "
      "--virtual-time-budget=5000 --screenshot=" +
      shot + " '" + url + "' 2>/dev/null");
  ASSERT_EQ(taken.exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(rows_spanned(image, 0x1f, 0x77, 0xb4), 30)
      << "the one point, in the first run's colour, above its legend";
  board.signal(SIGTERM);
  EXPECT_EQ(board.wait(), 0);
}

// The runs table stays live: a run that appears and a status that changes show without a
// reload. The browser talks to the board through a proxy in this test, which changes the runs
// tree just before the page's second request for the runs, so no timing is involved: the first
// answer cannot hold the change, and only a page that asks again can show it.
TEST(BoardInBrowserAlone, TheRunsTableShowsNewRunsAndStatusesWithoutAReload) {
  if (testing::run_command("command -v chromium").exit_code != 0)
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  testing::TempDir dir;
  auto write_run = [&](const std::string& name, const std::string& status) {
    std::string run = "runs/" + name + "/20261128-000000/";
    dir.write(run + "run.json",
              "{\"status\": \"" + status + "\", \"start_time\": \"2026-11-28T00:00:00Z\"}");
    dir.write(run + "config.yaml", "name: " + name + "\n");
    dir.write(run + "metrics.csv",
              "step,epoch,split,metric,value,wall_time\n10,1,val,loss,0.5,1\n");
  };
  write_run("first", "finished");
  testing::ChildProcess board(kiln("board " + dir.file("runs") + " --port 0"));
  std::string line;
  ASSERT_TRUE(board.read_line(line));
  int board_port = std::stoi(line.substr(line.rfind(':') + 1));

  std::atomic<int> asked{0};
  httplib::Server proxy;
  proxy.Get(".*", [&](const httplib::Request& request, httplib::Response& response) {
    if (request.path == "/api/runs" && ++asked == 2) {
      write_run("second", "finished");
      write_run("first", "failed");
    }
    httplib::Client to_board("127.0.0.1", board_port);
    httplib::Result answer = to_board.Get(request.target.c_str());
    if (!answer) {
      response.status = 502;
      return;
    }
    response.status = answer->status;
    response.set_content(answer->body, answer->get_header_value("Content-Type").c_str());
  });
  int port = proxy.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { proxy.listen_after_bind(); });
  testing::CommandResult dom = testing::run_command(
      "chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 --dump-dom "
      "'http://127.0.0.1:" +
      std::to_string(port) + "/' 2>/dev/null");
  proxy.stop();
  serving.join();
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_GE(asked.load(), 2) << "the page asked for the runs again";
  EXPECT_THAT(dom.out, HasSubstr("<tr data-run=\"second/20261128-000000\""));
  EXPECT_THAT(dom.out, HasSubstr("(2 runs)"));
  EXPECT_THAT(dom.out, HasSubstr("<td>failed</td>"));
  board.signal(SIGTERM);
  EXPECT_EQ(board.wait(), 0);
}

// A study of kiln tune in the tree: its trials' values over the trials and its parallel
// coordinates, drawn in the report as on the board.
TEST_F(BoardInBrowser, TheReportDrawsAStudysTrials) {
  std::string rows = dir_.write("rows.csv", testing::binary_rows(200));
  std::string config = dir_.write(
      "binary.yaml",
      testing::binary_config(rows, rows,
                             "train: {max: 10 steps, validate_every: 10 steps}\n"
                             "tune: {metric: val/accuracy, mode: max, trials: 3, sampler: random,\n"
                             "  space: {optimizer.lr: {type: loguniform, low: 0.01, high: 1}}}\n"));
  auto tuned = testing::run_command(
      kiln("tune " + config + " --runs-root " + dir_.file("runs") + " --study s"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out << tuned.err;
  std::string report = dir_.file("report.html");
  ASSERT_EQ(testing::run_command(kiln("report " + dir_.file("runs") + " -o " + report)).exit_code,
            0);
  testing::CommandResult dom = browse("file://" + report, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("<div class=\"study\" data-study=\"binary/s\">"));
  EXPECT_THAT(dom.out, HasSubstr("val/accuracy (max), 3 trials (3 complete), best: trial"));
  EXPECT_THAT(dom.out, ::testing::ContainsRegex("id=\"study-values-0\"[^>]*data-points=\"3\""));
  EXPECT_THAT(dom.out, ::testing::ContainsRegex("id=\"study-parallel-0\"[^>]*data-lines=\"3\""));
}

// The same page as one file, opened from disk with no server: the runs and their curves.
TEST_F(BoardInBrowser, TheReportShowsTheSameWithoutAServer) {
  std::string report = dir_.file("report.html");
  testing::CommandResult written =
      testing::run_command(kiln("report " + dir_.file("runs") + " -o " + report));
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_THAT(written.out, HasSubstr("wrote " + report));
  testing::CommandResult dom = browse("file://" + report, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("(3 runs)"));
  EXPECT_THAT(dom.out, ::testing::ContainsRegex("data-points=\"[1-9][0-9]*\""));
  EXPECT_THAT(dom.out, HasSubstr("<img alt=\"samples\" src=\"data:image/png;base64,"));
  std::string shot = dir_.file("report.png");
  ASSERT_EQ(browse("file://" + report, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(pixels_of(image, 0x1f, 0x77, 0xb4), 100);
}

TEST(Board, AnAddressInUseIsAUsageErrorNamingIt) {
  testing::TempDir dir;
  fs::create_directories(dir.file("runs"));
  testing::ChildProcess first(kiln("board " + dir.file("runs") + " --port 0"));
  std::string line;
  ASSERT_TRUE(first.read_line(line));
  size_t colon = line.rfind(':');
  std::string port = line.substr(colon + 1, line.find('/', colon) - colon - 1);
  testing::CommandResult second =
      testing::run_command(kiln("board " + dir.file("runs") + " --port " + port));
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_THAT(second.err, HasSubstr("cannot listen on 127.0.0.1:" + port));
  first.signal(SIGTERM);
  EXPECT_EQ(first.wait(), 0);
}

}  // namespace
}  // namespace kiln
