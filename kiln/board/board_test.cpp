// `kiln board`'s server on a real socket, asked by cpp-httplib's client as a browser would: the
// page, Chart.js, the runs table, metrics.csv's rows as they are appended, the runs' files, and
// nothing outside the root, however the run is named.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "kiln/board/board_api.h"
#include "kiln/board/board_server.h"
#include "kiln/board/board_studies.h"
#include "kiln/board/report.h"
#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/io/image_codec.h"
#include "kiln/tensorboard/event_log.h"
#include "kiln/tune/study.h"
#include "tests/support/raw_connection.h"
#include "tests/support/temp_dir.h"

namespace kiln::board {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

void write(const std::string& path, const std::string& text, bool append = false) {
  std::ofstream(path, append ? std::ios::app | std::ios::binary : std::ios::binary) << text;
}

class Board : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = dir_.file("runs/fashion/20261101-100000");
    fs::create_directories(run_);
    write(run_ + "/run.json", R"({"status": "running", "start_time": "2026-11-01T10:00:00Z"})");
    write(run_ + "/config.yaml", "name: fashion\noptimizer: {lr: 0.1}\n");
    write(run_ + "/notes.md", "first try\n");
    write(run_ + "/metrics.csv",
          "step,epoch,split,metric,value,wall_time\n10,0.5,train,loss,2.5,100\n");
    fs::create_directories(dir_.file("outside"));
    write(dir_.file("outside/run.json"), "{}");
    write(dir_.file("outside/secret.txt"), "not for the board");
    fs::create_directory_symlink(dir_.file("outside"), dir_.file("runs/link"));
    write(dir_.file("chart.js"), "/* Chart.js */");
    server_ = std::make_unique<BoardServer>(dir_.file("runs"), dir_.file("chart.js"));
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  httplib::Result get(const std::string& path) { return client_->Get(path); }
  Json get_json(const std::string& path) {
    httplib::Result result = get(path);
    EXPECT_TRUE(result) << path;
    EXPECT_EQ(result->status, 200) << path << ": " << result->body;
    return Json::parse(result->body);
  }

  testing::TempDir dir_;
  std::string run_;
  std::unique_ptr<BoardServer> server_;
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(Board, ServesThePageAndChartJsFromItself) {
  httplib::Result page = get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("<title>kiln board</title>"));
  EXPECT_THAT(page->body, HasSubstr("<script src=\"chart.js\">"));
  EXPECT_THAT(page->body, ::testing::Not(HasSubstr("http://"))) << "no outside requests";
  EXPECT_THAT(page->body, ::testing::Not(HasSubstr("https://")));
  EXPECT_EQ(get("/chart.js")->body, "/* Chart.js */");
}

TEST_F(Board, ListsTheRunsWithTheFiltersOfKilnRuns) {
  Json runs = get_json("/api/runs");
  ASSERT_EQ(runs["runs"].size(), 1u) << "the link out of the root is not listed";
  EXPECT_EQ(runs["runs"][0]["run"], "fashion/20261101-100000");
  EXPECT_EQ(runs["columns"][0], "name");
  EXPECT_EQ(runs["runs"][0]["cells"][0], "fashion");
  EXPECT_EQ(get_json("/api/runs?filter=status%3Dfinished")["runs"].size(), 0u);
  httplib::Result bad = get("/api/runs?filter=nonsense");
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("expected KEY=GLOB"));
}

// Studies of kiln tune: every study.db under the root with its trials, a damaged one with its
// problem, none reached through a link out of the root; the report carries them too.
TEST_F(Board, ListsTheStudiesUnderTheRootWithTheirTrials) {
  Json config = parse_config_text(
      "tune:\n  metric: val/accuracy\n  mode: max\n  space:\n"
      "    optimizer.lr: {type: loguniform, low: 1.0e-4, high: 1}\n"
      "    kind: {type: choice, values: [a, b]}\n",
      "t.yaml", false);
  tune::SearchSpace space =
      tune::SearchSpace::read(config["tune"]["space"], {"tune.space", nullptr});
  fs::create_directories(dir_.file("runs/fashion/s1"));
  tune::Study study = tune::Study::create(dir_.file("runs/fashion/s1/study.db"),
                                          {"s1", "val/accuracy", true, config, "t0"}, space);
  study.start_trial(space, *space.assignment_of({{"optimizer.lr", 0.01}, {"kind", "b"}}), "t1");
  study.finish_trial(0, tune::TrialState::kComplete, 0.8, "", "t2");
  study.start_trial(space, *space.assignment_of({{"optimizer.lr", 0.5}, {"kind", "a"}}), "t3");
  fs::create_directories(dir_.file("runs/fashion/s2"));
  write(dir_.file("runs/fashion/s2/study.db"), "no database at all, but long enough to be read");
  tune::Study::create(dir_.file("outside/study.db"), {"x", "m", false, config, "t"}, space);

  Json studies = get_json("/api/studies")["studies"];
  ASSERT_EQ(studies.size(), 2u) << studies.dump();
  const Json& s1 = studies[0];
  EXPECT_EQ(s1["study"], "fashion/s1");
  EXPECT_EQ(s1["metric"], "val/accuracy");
  EXPECT_EQ(s1["mode"], "max");
  EXPECT_EQ(s1["parameters"], Json::parse(R"([{"name": "optimizer.lr", "log": true},
                                               {"name": "kind", "log": false}])"));
  ASSERT_EQ(s1["trials"].size(), 2u);
  EXPECT_EQ(s1["trials"][0]["value"], 0.8);
  EXPECT_EQ(s1["trials"][0]["values"]["kind"], "b");
  EXPECT_EQ(s1["trials"][0]["run"], "fashion/s1/trial-0000");
  EXPECT_EQ(s1["trials"][1]["state"], "running");
  EXPECT_TRUE(s1["trials"][1]["value"].is_null());
  EXPECT_EQ(studies[1]["study"], "fashion/s2");
  EXPECT_THAT(studies[1]["problem"].get<std::string>(), HasSubstr("not a kiln study database"));
  EXPECT_THAT(report_html(dir_.file("runs"), "/* Chart.js */"),
              HasSubstr(R"("studies":{"studies":[{"name":"s1")"));
}

// The page asks from where it stopped: only rows appended since, and only whole ones.
TEST_F(Board, MetricsAreServedFromWhereThePageStopped) {
  Json first = get_json("/api/metrics?run=fashion/20261101-100000&from=0");
  ASSERT_EQ(first["rows"].size(), 1u);
  EXPECT_EQ(first["rows"][0], Json::parse(R"([10, 0.5, "train/loss", 2.5, 100.0])"));
  int64_t next = first["next"];
  write(run_ + "/metrics.csv", "20,1,train,loss,2.0,110\n20,1,val,acc", true);
  Json second = get_json("/api/metrics?run=fashion/20261101-100000&from=" + std::to_string(next));
  ASSERT_EQ(second["rows"].size(), 1u) << "the row being written waits";
  EXPECT_EQ(second["rows"][0][0], 20);
  write(run_ + "/metrics.csv", "uracy,0.7,111\n", true);
  Json third = get_json("/api/metrics?run=fashion/20261101-100000&from=" +
                        std::to_string(second["next"].get<int64_t>()));
  ASSERT_EQ(third["rows"].size(), 1u);
  EXPECT_EQ(third["rows"][0][2], "val/accuracy");
  // A resume cut the file back below where the page was: it starts again.
  write(run_ + "/metrics.csv", "step,epoch,split,metric,value,wall_time\n");
  EXPECT_EQ(get_json("/api/metrics?run=fashion/20261101-100000&from=999")["restart"], true);
  EXPECT_EQ(get("/api/metrics?run=fashion/20261101-100000&from=0&points=many")->status, 400);
  EXPECT_EQ(get("/api/metrics?run=fashion/20261101-100000&from=-1")->status, 400);
  // ... or cut it back and it grew past that point again: the offset is inside a row.
  write(run_ + "/metrics.csv", "12,0.6,train,loss,2.45,101\n14,0.7,train,loss,2.3,102\n", true);
  Json regrown = get_json("/api/metrics?run=fashion/20261101-100000&from=" + std::to_string(next));
  EXPECT_EQ(regrown["restart"], true);
  EXPECT_EQ(regrown["rows"].size(), 2u);
}

// Answers are kept while the file stays as it was (twelve clients asking for a 95 MB file over and
// over held every worker): a row appended, or the file replaced by one of the same size, is seen.
TEST_F(Board, MetricsKeptForRepeatedQuestionsFollowTheFile) {
  const std::string ask = "/api/metrics?run=fashion/20261101-100000&from=0";
  Json first = get_json(ask);
  EXPECT_EQ(get_json(ask), first);
  write(run_ + "/metrics.csv", "20,1,train,loss,2.0,110\n", true);
  EXPECT_EQ(get_json(ask)["rows"].size(), 2u);
  std::string same_size = read_text_file(run_ + "/metrics.csv");
  same_size.replace(same_size.find("2.0,110"), 7, "9.0,110");
  write(run_ + "/replaced.csv", same_size);
  fs::rename(run_ + "/replaced.csv", run_ + "/metrics.csv");  // as a resume's trim replaces it
  EXPECT_EQ(get_json(ask)["rows"][1][3], 9.0);
}

// A metrics.csv that is a FIFO nothing writes to hung `kiln report` (an outside campaign's find):
// it is named, never opened for a blocking read.
TEST_F(Board, AMetricsFileThatIsNotARegularFileIsAProblemNotAWait) {
  fs::remove(run_ + "/metrics.csv");
  ASSERT_EQ(::mkfifo((run_ + "/metrics.csv").c_str(), 0600), 0);
  Json rows = get_json("/api/metrics?run=fashion/20261101-100000&from=0");
  EXPECT_EQ(rows["rows"].size(), 0u);
  EXPECT_THAT(rows["problem"].get<std::string>(), HasSubstr("is not a regular file"));
  Json runs = get_json("/api/runs");
  ASSERT_EQ(runs["runs"].size(), 1u);
  EXPECT_THAT(runs["runs"][0]["problems"].dump(), HasSubstr("not a regular file"));
}

TEST_F(Board, ServesTheLatestImageOfEachTag) {
  {
    tensorboard::EventLog log(run_ + "/tensorboard", {0, "host", 1});
    log.image("val", "samples", 10, io::Image{1, 1, 1, {10}}, 1);
    log.image("val", "samples", 20, io::Image{1, 1, 1, {20}}, 2);
  }
  Json images = get_json("/api/images?run=fashion/20261101-100000");
  ASSERT_EQ(images["images"].size(), 1u);
  EXPECT_EQ(images["images"][0]["tag"], "samples");
  EXPECT_EQ(images["images"][0]["step"], 20);
  std::optional<std::string> png = base64_decode(images["images"][0]["png"].get<std::string>());
  ASSERT_TRUE(png.has_value());
  EXPECT_EQ(io::decode_image(*png, 0, "png").pixels, std::vector<uint8_t>{20});
  EXPECT_EQ(get("/api/images?run=../outside")->status, 404);
}

TEST_F(Board, ServesTheRunsOwnFilesOnly) {
  httplib::Result notes = get("/api/text?run=fashion/20261101-100000&name=notes.md");
  EXPECT_EQ(notes->status, 200);
  EXPECT_EQ(notes->body, "first try\n");
  EXPECT_EQ(get("/api/text?run=fashion/20261101-100000&name=metrics.csv")->status, 404);
  EXPECT_EQ(get("/api/text?run=fashion/20261101-100000&name=../../outside/secret.txt")->status,
            404);
}

TEST_F(Board, NothingOutsideTheRootIsServed) {
  for (const char* run : {"..", "../outside", "fashion/../../outside", "%2e%2e/outside", "link",
                          "/etc", "fashion/20261101-100000/../../../outside", ""}) {
    SCOPED_TRACE(run);
    EXPECT_EQ(get(std::string("/api/text?name=run.json&run=") + run)->status, 404);
    EXPECT_EQ(get(std::string("/api/metrics?run=") + run)->status, 404);
  }
  EXPECT_EQ(get("/../outside/secret.txt")->status, 404);
  EXPECT_FALSE(run_under(dir_.file("runs"), "link").has_value());
  EXPECT_TRUE(run_under(dir_.file("runs"), "fashion/20261101-100000").has_value());
}

// A run's own file that is a link out of the root (an outside campaign served notes.md -> a file
// elsewhere with 200): the run is not served, as a run reached through a link is not.
TEST_F(Board, ARunHoldingALinkOutOfTheRootIsNotServed) {
  const std::string run = "fashion/20261101-100000";
  fs::remove(run_ + "/notes.md");
  fs::create_symlink(dir_.file("outside/secret.txt"), run_ + "/notes.md");
  EXPECT_EQ(get("/api/text?name=notes.md&run=" + run)->status, 404);
  EXPECT_EQ(get("/api/text?name=run.json&run=" + run)->status, 404);
  EXPECT_EQ(get("/api/metrics?run=" + run)->status, 404);
  EXPECT_EQ(get_json("/api/runs")["runs"].size(), 0u);
  EXPECT_EQ(get_json("/api/details?run=" + run)["runs"].size(), 0u);
  EXPECT_THAT(report_html(dir_.file("runs"), "/* Chart.js */"),
              ::testing::Not(HasSubstr("not for the board")));

  fs::remove(run_ + "/notes.md");  // a link that stays inside the root is followed
  write(dir_.file("runs/shared-notes.md"), "shared\n");
  fs::create_symlink(dir_.file("runs/shared-notes.md"), run_ + "/notes.md");
  EXPECT_EQ(get("/api/text?name=notes.md&run=" + run)->body, "shared\n");

  fs::create_directories(dir_.file("outside/events/val"));  // and event folders are looked into
  fs::create_directories(run_ + "/tensorboard/val");
  fs::create_symlink(dir_.file("outside/secret.txt"), run_ + "/tensorboard/val/events.out");
  EXPECT_EQ(get("/api/images?run=" + run)->status, 404);
  fs::remove(run_ + "/tensorboard/val/events.out");
  fs::remove(run_ + "/tensorboard/val");
  fs::create_directory_symlink(dir_.file("outside/events/val"), run_ + "/tensorboard/val");
  EXPECT_EQ(get("/api/images?run=" + run)->status, 404);
}

// A run's file that is a device answered 500 with an empty body: it is a 400 that says why,
// without the server's path.
TEST_F(Board, ARunFileThatIsNotARegularFileIsRefusedWithItsName) {
  fs::remove(run_ + "/notes.md");
  ASSERT_EQ(::mkfifo((run_ + "/notes.md").c_str(), 0600), 0);
  httplib::Result notes = get("/api/text?run=fashion/20261101-100000&name=notes.md");
  EXPECT_EQ(notes->status, 400);
  EXPECT_THAT(notes->body, HasSubstr("notes.md is not a regular file"));
  EXPECT_THAT(notes->body, ::testing::Not(HasSubstr(dir_.path())));
  fs::remove(run_ + "/notes.md");
  // Too big to show was said as "not a regular file".
  std::ofstream(run_ + "/train.log") << "x";
  fs::resize_file(run_ + "/train.log", kMaxTextFileBytes + 1);  // sparse: no disk taken
  httplib::Result log = get("/api/text?run=fashion/20261101-100000&name=train.log");
  EXPECT_EQ(log->status, 400);
  EXPECT_THAT(log->body, ::testing::ContainsRegex("train.log is [0-9]+ bytes, more than"));
  EXPECT_THAT(log->body, ::testing::Not(HasSubstr(dir_.path())));
  fs::create_symlink("/dev/zero", run_ + "/notes.md");  // a device, and out of the root
  EXPECT_EQ(get("/api/text?run=fashion/20261101-100000&name=notes.md")->status, 404);
}

// Eight clients sending their headers slowly held every thread of the board's first server, and
// the page waited for them; a NUL byte in a run's name reached the path read.
TEST_F(Board, SlowClientsHoldNoOneElseAndAQueryIsCheckedAsItIsDecoded) {
  std::vector<std::unique_ptr<testing::RawConnection>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<testing::RawConnection>(port_));
    slow.back()->send_text("GET /api/runs HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  }
  httplib::Result page = get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  httplib::Result nul = get("/api/text?run=fashion%00/20261101-100000&name=notes.md");
  EXPECT_EQ(nul->status, 400);
  EXPECT_THAT(nul->body, HasSubstr("parameter run holds a NUL byte"));
  EXPECT_EQ(client_->Post("/api/runs", "{}", "application/json")->status, 405);
  httplib::Result unknown = get("/api/nothing");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_THAT(unknown->body, HasSubstr("no such page of the board: /api/nothing"));
}

// A study.db that is a link out of the root is not read.
TEST_F(Board, AStudyDatabaseLinkedFromOutsideIsNotListed) {
  fs::create_directories(dir_.file("runs/study"));
  write(dir_.file("outside/study.db"), "not a database");
  fs::create_symlink(dir_.file("outside/study.db"), dir_.file("runs/study/study.db"));
  EXPECT_EQ(get_json("/api/studies")["studies"].size(), 0u);
}

// The report is the page with Chart.js and every run's data inlined: nothing to fetch, and text
// from the runs cannot end its scripts early.
TEST_F(Board, TheReportCarriesEverythingInlined) {
  // "<!--<script>" (a metric name, an outside campaign's) would keep the data script open.
  write(run_ + "/notes.md", "tried </script><b>this</b> <!--<script>\n");
  std::string html = report_html(dir_.file("runs"), "/* Chart.js */");
  EXPECT_THAT(html, HasSubstr("<title>kiln report</title>"));
  EXPECT_THAT(html, HasSubstr("<script>/* Chart.js */</script>"));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<script src=")));
  EXPECT_THAT(html, ::testing::Not(::testing::ContainsRegex("(src|href)=\"(https?:)?//")));
  size_t data = html.find("window.KILN_DATA = ");
  ASSERT_NE(data, std::string::npos);
  std::string json = html.substr(data + 19, html.find(";</script>", data) - data - 19);
  EXPECT_THAT(json, ::testing::Not(HasSubstr("<")));
  Json parsed = Json::parse(json);
  EXPECT_EQ(parsed["runs"]["runs"][0]["run"], "fashion/20261101-100000");
  EXPECT_EQ(parsed["metrics"]["fashion/20261101-100000"]["rows"].size(), 1u);
  EXPECT_EQ(parsed["texts"]["fashion/20261101-100000"]["notes.md"],
            "tried </script><b>this</b> <!--<script>\n");
  EXPECT_THROW(report_html(dir_.file("runs"), "x = '</script>';"), UsageError);
}

TEST(BoardServer, AMissingChartJsOrRootIsAUsageError) {
  testing::TempDir dir;
  try {
    BoardServer server(dir.path(), dir.file("missing.js"));
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("apt install libjs-chart.js"));
  }
  std::string chart = dir.write("chart.js", "x");
  EXPECT_THROW(BoardServer(dir.file("no-runs-here"), chart), UsageError);
}

}  // namespace
}  // namespace kiln::board
