// End-to-end: `kiln board` over a runs tree of two trained runs and a damaged one, opened in a
// real browser (Debian's chromium, headless): the page lists the runs and draws their curves as
// small multiples, and each view (compare, images, histograms) opens from its address. The
// screenshots taken are kept as build/board_*.png (docs/observe.md shows them). Skipped, saying
// so, where chromium is not installed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "kiln/core/json.h"
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

// Pixels of exactly `colour` right of column `left`: the views lie right of the runs table,
// whose swatches show each ticked run's colour too.
int64_t pixels_right_of(const io::Image& image, int64_t left, uint8_t r, uint8_t g, uint8_t b) {
  int64_t count = 0;
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = left; x < image.width; ++x) {
      size_t i = size_t((y * image.width + x) * image.channels);
      count += image.pixels[i] == r && image.pixels[i + 1] == g && image.pixels[i + 2] == b;
    }
  return count;
}

// Pixels that are neither white nor grey right of column `left`: colour drawn in a view.
int64_t coloured_right_of(const io::Image& image, int64_t left) {
  int64_t count = 0;
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = left; x < image.width; ++x) {
      const uint8_t* p = &image.pixels[size_t((y * image.width + x) * image.channels)];
      count += std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]}) > 40;
    }
  return count;
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

  // The board over the runs, and its address.
  std::string start_board() {
    board_ =
        std::make_unique<testing::ChildProcess>(kiln("board " + dir_.file("runs") + " --port 0"));
    std::string line;
    EXPECT_TRUE(board_->read_line(line));
    return line.substr(12, line.find(" over ") - 12);
  }

  // The two trained runs, as the board names them.
  std::vector<std::string> trained_runs() {
    std::vector<std::string> runs;
    for (const auto& entry : fs::directory_iterator(dir_.file("runs/board")))
      runs.push_back("board/" + entry.path().filename().string());
    std::sort(runs.begin(), runs.end());
    return runs;
  }

  void TearDown() override {
    if (!board_) return;
    board_->signal(SIGTERM);
    EXPECT_EQ(board_->wait(), 0);
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::ChildProcess> board_;
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
  // A chart per value, each holding both runs' lines: train and validation for the loss.
  EXPECT_THAT(dom.out, ::testing::ContainsRegex(
                           "class=\"chart-card\" data-key=\"loss\" data-points=\"[1-9][0-9]*\" "
                           "data-lines=\"4\""));
  EXPECT_THAT(dom.out, HasSubstr("class=\"chart-card\" data-key=\"accuracy\""));
  EXPECT_THAT(dom.out, HasSubstr("class=\"chart-card\" data-key=\"time/forward\""));
  EXPECT_THAT(dom.out, HasSubstr("<div class=\"group\" data-group=\"time\">"));
  // The page wrote what it shows into its address: the first three runs ticked.
  EXPECT_THAT(dom.out, ::testing::ContainsRegex(
                           "id=\"copy-link\" href=\"#view=scalars&amp;run=board%2F[0-9-]+&amp;"
                           "run=board%2F[0-9-]+&amp;run=broken"));

  std::string shot = std::string(KILN_BUILD_DIR) + "/board_screenshot.png";
  fs::remove(shot);
  ASSERT_EQ(browse(url, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(pixels_right_of(image, 600, 0x1f, 0x77, 0xb4), 300) << "the first run's curves";
  EXPECT_GT(pixels_right_of(image, 600, 0xd6, 0x27, 0x28), 300) << "the second run's curves";

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
  EXPECT_GT(pixels_right_of(image, 600, 0x1f, 0x77, 0xb4), 10)
      << "the one point, in the first run's colour, in its chart";
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
  EXPECT_THAT(dom.out, HasSubstr("<td class=\"status-failed\">failed</td>"));
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
  testing::CommandResult dom = browse("file://" + report + "#view=studies", "--dump-dom");
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
  std::vector<std::string> runs = trained_runs();
  std::string images =
      browse("file://" + report + "#view=images&chosen=" + runs[0], "--dump-dom").out;
  EXPECT_THAT(images, HasSubstr("<img alt=\"samples\" src=\"data:image/png;base64,"));
  std::string compared =
      browse("file://" + report + "#view=compare&run=" + runs[0] + "&run=" + runs[1], "--dump-dom")
          .out;
  EXPECT_THAT(compared, HasSubstr("<tr data-key=\"optimizer.lr\">"));
  std::string histograms =
      browse("file://" + report + "#view=histograms&chosen=" + runs[0], "--dump-dom").out;
  EXPECT_THAT(histograms, HasSubstr("data-tag=\"weights/layers.1.weight\" data-steps=\"3\""));
  std::string shot = dir_.file("report.png");
  ASSERT_EQ(browse("file://" + report, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(pixels_of(image, 0x1f, 0x77, 0xb4), 100);
}

// An address with a tag filter and an x axis: only the matching values' charts, for the two runs
// it names.
TEST_F(BoardInBrowser, AnAddressChoosesTheRunsAndTags) {
  std::string url = start_board();
  std::vector<std::string> runs = trained_runs();
  testing::CommandResult dom =
      browse(url + "#view=scalars&run=" + runs[0] + "&run=" + runs[1] + "&tags=loss&x=epoch",
             "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("class=\"chart-card\" data-key=\"loss\""));
  EXPECT_THAT(dom.out, ::testing::Not(HasSubstr("data-key=\"accuracy\"")));
  EXPECT_THAT(dom.out, HasSubstr("href=\"#view=scalars&amp;run=" + std::string("board%2F")));
  EXPECT_THAT(dom.out, HasSubstr("&amp;tags=loss&amp;x=epoch\""));
  EXPECT_THAT(dom.out, ::testing::Not(HasSubstr("run=broken")));
}

// Compare: the configs' one difference side by side, each run's notes, and the parallel
// coordinates of the differing value against the chosen metric, a line per run.
TEST_F(BoardInBrowser, CompareShowsWhereTheConfigsDifferAndTheirParallelCoordinates) {
  std::string url = start_board();
  std::vector<std::string> runs = trained_runs();
  std::string address =
      url + "#view=compare&run=" + runs[0] + "&run=" + runs[1] + "&metric=val%2Faccuracy";
  testing::CommandResult dom = browse(address, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("Config: the 1 of "));
  EXPECT_THAT(dom.out,
              ::testing::ContainsRegex(
                  "<tr data-key=\"optimizer.lr\"><td>optimizer.lr</td><td "
                  "class=\"differs\">0.0[15]</td><td class=\"differs\">0.0[15]</td></tr>"));
  EXPECT_THAT(dom.out, ::testing::Not(HasSubstr("<tr data-key=\"seed\">"))) << "alike: not shown";
  EXPECT_THAT(dom.out, ::testing::ContainsRegex("id=\"parallel\"[^>]*data-lines=\"2\""));
  EXPECT_THAT(dom.out, HasSubstr("<option selected=\"\">val/accuracy</option>"));
  std::string shot = std::string(KILN_BUILD_DIR) + "/board_compare.png";
  ASSERT_EQ(browse(address, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(pixels_right_of(image, 600, 0x1f, 0x77, 0xb4), 100) << "the first run's line";
  EXPECT_GT(pixels_right_of(image, 600, 0xd6, 0x27, 0x28), 100) << "the second run's line";
}

// Images: the chosen run's confusion matrix, misclassified examples and samples, then its files.
TEST_F(BoardInBrowser, ImagesShowTheChosenRunsLastValidation) {
  std::string url = start_board();
  std::string address = url + "#view=images&chosen=" + trained_runs()[0];
  testing::CommandResult dom = browse(address, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  for (const char* tag : {"confusion_matrix", "misclassified", "samples"})
    EXPECT_THAT(dom.out, HasSubstr("<figure class=\"image\" data-tag=\"" + std::string(tag) +
                                   "\"><figcaption>" + tag + " (step 48)</figcaption><img"));
  EXPECT_LT(dom.out.find("data-tag=\"confusion_matrix\""), dom.out.find("data-tag=\"samples\""));
  EXPECT_THAT(dom.out, HasSubstr("<h4>config.yaml</h4>"));
  std::string shot = std::string(KILN_BUILD_DIR) + "/board_images.png";
  ASSERT_EQ(browse(address, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(coloured_right_of(image, 600), 2000) << "the matrix's shades and the frames";
}

// Histograms: a heat map per parameter and gradient, a column per step they were written at.
TEST_F(BoardInBrowser, HistogramsAreHeatMapsOverSteps) {
  std::string url = start_board();
  std::string address = url + "#view=histograms&chosen=" + trained_runs()[0] + "&tags=weights";
  testing::CommandResult dom = browse(address, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0);
  EXPECT_THAT(dom.out, HasSubstr("data-tag=\"weights/layers.1.weight\" data-steps=\"3\""));
  EXPECT_THAT(dom.out, HasSubstr("data-tag=\"weights/layers.3.bias\" data-steps=\"3\""));
  EXPECT_THAT(dom.out, ::testing::Not(HasSubstr("data-tag=\"gradients/"))) << "the tag filter";
  EXPECT_THAT(dom.out, HasSubstr("steps 16 to 48"));
  std::string shot = std::string(KILN_BUILD_DIR) + "/board_histograms.png";
  ASSERT_EQ(browse(address, "--screenshot=" + shot).exit_code, 0);
  io::Image image = io::decode_image(testing::read_file(shot), 3, shot);
  EXPECT_GT(coloured_right_of(image, 600), 5000) << "the heat maps' shades";
}

// A user's session, driven through chromium's DevTools protocol by tests/js/board_drive.js: the
// pointer, clicks and keys do what the addresses above do, the hover readout names every line's
// value, the PNG and CSV buttons download the chart, and a reload brings the same view back.
TEST_F(BoardInBrowser, AUserDrivesEachViewWithPointerAndKeys) {
  if (testing::run_command("command -v node").exit_code != 0)
    GTEST_SKIP() << "node is not installed (scripts/install-deps.sh installs it)";
  std::string url = start_board();
  std::vector<std::string> runs = trained_runs();
  std::string downloads = dir_.file("downloads");
  fs::create_directories(downloads);
  testing::CommandResult drive =
      // Bounded, so that a browser that stalls fails this test rather than ctest's timeout.
      testing::run_command("timeout 300 node " + std::string(KILN_SOURCE_DIR) +
                           "/tests/js/board_drive.js '" + url + "' '" + downloads + "'");
  ASSERT_EQ(drive.exit_code, 0) << drive.err;
  Json seen = Json::parse(drive.out);

  EXPECT_EQ(seen["ticked"].size(), 3u) << "the first three runs, the damaged one included";
  EXPECT_EQ(seen["lossLines"], 4) << "train and validation of both trained runs";
  EXPECT_EQ(seen["lossLinesUnticked"], 2) << "one run unticked";

  std::string readout = seen["readout"];
  EXPECT_THAT(readout, ::testing::StartsWith("step "));
  for (const std::string& run : runs)
    for (const char* split : {" train: ", " val: "})
      EXPECT_THAT(readout, ::testing::ContainsRegex(run + split + "[0-9]\\.[0-9]+"));

  ASSERT_EQ(seen["png"], "loss.png");
  io::Image png = io::decode_image(testing::read_file(downloads + "/loss.png"), 3, "loss.png");
  EXPECT_GT(pixels_of(png, 0x1f, 0x77, 0xb4), 100) << "the first run's lines";
  EXPECT_GT(pixels_of(png, 0xd6, 0x27, 0x28), 100) << "the second run's lines";
  ASSERT_EQ(seen["csv"], "loss.csv");
  std::string csv = testing::read_file(downloads + "/loss.csv");
  EXPECT_THAT(csv, ::testing::StartsWith("run,split,tag,step,epoch,wall_time,value\n"));
  for (const std::string& run : runs) {
    EXPECT_THAT(csv, HasSubstr(run + ",train,train/loss,4,0.25,"));
    EXPECT_THAT(csv, HasSubstr(run + ",val,val/loss,48,3,"));
  }

  EXPECT_EQ(seen["compareKeys"], Json::array({"optimizer.lr"}))
      << "the damaged run, whose config cannot be read, is left out of the diff";
  EXPECT_EQ(seen["imageTags"], Json::array({"confusion_matrix", "misclassified", "samples"}));
  EXPECT_GE(seen["heatMaps"], 8) << "weights and gradients of two linear layers";

  EXPECT_EQ(seen["keysFiltered"], Json::array({"accuracy"}));
  EXPECT_EQ(seen["addressReloaded"], seen["address"]);
  EXPECT_EQ(seen["keysReloaded"], Json::array({"accuracy"}));
  EXPECT_EQ(seen["tagsReloaded"], "^(train|val)/accuracy$");
  EXPECT_EQ(seen["tickedReloaded"].size(), 3u);
  EXPECT_EQ(seen["chosenReloaded"], seen["firstUnticked"]);
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
