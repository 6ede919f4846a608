// A trial's output read from a real pipe as it comes, piece by piece, into its log and into
// reports; its metrics file read as it grows; a malformed report named by its file and line.

#include "kiln/tune/trial_output.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::tune {
namespace trial_output_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class TrialOutputTest : public ::testing::Test {
 protected:
  TrialOutputTest() {
    int ends[2];
    EXPECT_EQ(::pipe(ends), 0);
    // Room for the longest test's writes, which no reader empties while they are made.
    EXPECT_GE(::fcntl(ends[1], F_SETPIPE_SZ, 1 << 20), 1 << 20);
    write_end_ = ends[1];
    output_ = std::make_unique<TrialOutput>(ends[0], dir_.file("trial.log"), "trial.log",
                                            dir_.file("metrics.jsonl"), "metrics.jsonl");
  }
  ~TrialOutputTest() override {
    if (write_end_ >= 0) ::close(write_end_);
  }
  void say(const std::string& text) {
    ASSERT_EQ(::write(write_end_, text.data(), text.size()), ssize_t(text.size()));
  }
  void end() {
    ::close(write_end_);
    write_end_ = -1;
  }
  void append_metrics(const std::string& text) {
    std::ofstream(dir_.file("metrics.jsonl"), std::ios::app) << text;
  }
  // The output of a trial whose program has ended at once, over the same files.
  void another_trial() {
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    ::close(ends[1]);
    output_ = std::make_unique<TrialOutput>(ends[0], dir_.file("trial.log"), "trial.log",
                                            dir_.file("metrics.jsonl"), "metrics.jsonl");
  }
  static std::vector<double> losses(const std::vector<MetricReport>& reports) {
    std::vector<double> values;
    for (const MetricReport& report : reports) values.push_back(report.values.at("loss"));
    return values;
  }

  testing::TempDir dir_;
  int write_end_ = -1;
  std::unique_ptr<TrialOutput> output_;
};

TEST_F(TrialOutputTest, ReportsComeAsTheirLinesCompleteAndEverythingIsLogged) {
  say("epoch 0\nkiln-metric loss=3 step=0\nkiln-metric lo");
  EXPECT_THAT(losses(output_->read()), ElementsAre(3));
  EXPECT_TRUE(output_->read().empty());  // nothing new: the read does not wait
  say("ss=2 step=1\n");
  EXPECT_THAT(losses(output_->read()), ElementsAre(2));
  say("done\nkiln-metric loss=1.5");  // the last line, without its newline
  end();
  std::vector<MetricReport> last = output_->read_to_end();
  EXPECT_THAT(losses(last), ElementsAre(1.5));
  EXPECT_FALSE(last[0].step);
  EXPECT_EQ(output_->fd(), -1);
  EXPECT_EQ(output_->last_line(), "done");
  EXPECT_EQ(read_text_file(dir_.file("trial.log")),
            "epoch 0\nkiln-metric loss=3 step=0\nkiln-metric loss=2 step=1\ndone\n"
            "kiln-metric loss=1.5");
}

TEST_F(TrialOutputTest, TheMetricsFileIsReadAsItGrows) {
  EXPECT_TRUE(output_->read().empty());  // not written yet
  append_metrics("{\"loss\": 4, \"step\": 0}\n{\"loss\": 3,");
  EXPECT_THAT(losses(output_->read()), ElementsAre(4));
  append_metrics(" \"step\": 1}\n\n");
  EXPECT_THAT(losses(output_->read()), ElementsAre(3));
  append_metrics("{\"loss\": 2.5}");
  end();
  EXPECT_THAT(losses(output_->read_to_end()), ElementsAre(2.5));
}

// KILN_METRICS_FILE replaced by a FIFO blocked the study in open(); linked to /dev/zero it spun
// the study at full CPU forever. Either is an error naming the file, at once.
TEST_F(TrialOutputTest, AMetricsFileReplacedByAFifoOrALinkIsAnErrorNotAWait) {
  ASSERT_EQ(::mkfifo(dir_.file("metrics.jsonl").c_str(), 0600), 0);
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("metrics.jsonl is no longer the regular file")));
  ASSERT_EQ(::unlink(dir_.file("metrics.jsonl").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", dir_.file("metrics.jsonl").c_str()), 0);
  another_trial();  // the first's file is read no more after its error
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("a link, a FIFO, a device or another file took")));
  ASSERT_EQ(::unlink(dir_.file("metrics.jsonl").c_str()), 0);  // removed: nothing to read
  another_trial();
  EXPECT_TRUE(output_->read().empty());
}

// Another regular file put in the metrics file's place (renamed over it, or a hard link to a
// file elsewhere) was read as if it were the trial's: an error naming it.
TEST_F(TrialOutputTest, AnotherFilePutInTheMetricsFilesPlaceIsAnError) {
  append_metrics("{\"loss\": 4, \"step\": 0}\n");
  struct stat made {};
  ASSERT_EQ(::stat(dir_.file("metrics.jsonl").c_str(), &made), 0);
  output_->metrics_file_is(made.st_dev, made.st_ino);
  EXPECT_THAT(losses(output_->read()), ElementsAre(4));
  std::ofstream(dir_.file("elsewhere.jsonl")) << "{\"loss\": 1, \"step\": 1}\n";
  ASSERT_EQ(::rename(dir_.file("elsewhere.jsonl").c_str(), dir_.file("metrics.jsonl").c_str()), 0);
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("another file took its place")));
  ASSERT_EQ(::unlink(dir_.file("metrics.jsonl").c_str()), 0);
  append_metrics("");  // a new trial's file, kept alive under a second name
  ASSERT_EQ(::stat(dir_.file("metrics.jsonl").c_str(), &made), 0);
  ASSERT_EQ(::link(dir_.file("metrics.jsonl").c_str(), dir_.file("kept.jsonl").c_str()), 0);
  another_trial();
  output_->metrics_file_is(made.st_dev, made.st_ino);
  std::ofstream(dir_.file("other.jsonl")) << "{\"loss\": 2, \"step\": 1}\n";
  ASSERT_EQ(::unlink(dir_.file("metrics.jsonl").c_str()), 0);
  ASSERT_EQ(::link(dir_.file("other.jsonl").c_str(), dir_.file("metrics.jsonl").c_str()), 0);
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("another file took its place")));
}

// A file that grows as fast as it is read is taken a bounded piece per call, so that the study
// goes on to its other trials between calls; every line is still read, in order.
TEST_F(TrialOutputTest, AGrowingMetricsFileIsReadABoundedPieceAtATime) {
  std::string many;
  for (int step = 0; many.size() < (2 << 20); ++step)  // 2 MiB, fewer than kMaxReports lines
    many += "{\"loss\": 1, \"step\": " + std::to_string(step) + "}\n";
  append_metrics(many);
  size_t first = output_->read().size(), total = first;
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, size_t(std::count(many.begin(), many.end(), '\n')));
  for (int call = 0; call < 100; ++call) total += output_->read().size();
  EXPECT_EQ(total, size_t(std::count(many.begin(), many.end(), '\n')));
}

TEST_F(TrialOutputTest, AMalformedReportIsNamedByItsFileAndLine) {
  append_metrics("{\"loss\": 1}\n{\"loss\": 1,\n");
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("metrics.jsonl line 2: not JSON")));
}

// After the report that failed the trial nothing more is parsed (a 1 TiB file kept the study
// reading it for the better part of an hour), while the output still goes to the log.
TEST_F(TrialOutputTest, AfterAMalformedReportNothingMoreIsParsed) {
  say("hello\nkiln-metric loss=low step=1\n");
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("trial.log line 2: loss=low is no finite number")));
  append_metrics("{\"loss\": 1,\n");
  say("kiln-metric loss=also-bad\nstill logged\n");
  EXPECT_TRUE(output_->read().empty());
  end();
  EXPECT_TRUE(output_->read_to_end().empty());
  EXPECT_THAT(read_text_file(dir_.file("trial.log")), HasSubstr("still logged"));
}

// A program that floods its metrics file kept the study hours behind it, growing by gigabytes.
TEST_F(TrialOutputTest, ReportsPastTheBoundFailTheTrial) {
  std::string many;
  for (int64_t step = 0; step <= kMaxReports; ++step)
    many += "{\"loss\": 1, \"step\": " + std::to_string(step) + "}\n";
  append_metrics(many);
  int64_t taken = 0;
  try {
    for (int call = 0; call < 1000; ++call) taken += int64_t(output_->read().size());
    FAIL() << "no bound";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("metrics.jsonl line 100001: more than 100000 reports"));
  }
  EXPECT_LE(taken, kMaxReports);
  append_metrics("{\"loss\": 1, \"step\": 0}\n");
  EXPECT_TRUE(output_->read().empty()) << "the file is read no more";
}

TEST_F(TrialOutputTest, TheLogKeepsItsBoundAndTheReportsAfterIt) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  TrialOutput bounded(ends[0], dir_.file("small.log"), "small.log", dir_.file("none"), "none", 64);
  std::string text = std::string(100, 'x') + "\nkiln-metric loss=2\n";
  ASSERT_EQ(::write(ends[1], text.data(), text.size()), ssize_t(text.size()));
  ::close(ends[1]);
  EXPECT_THAT(losses(bounded.read_to_end()), ElementsAre(2));
  std::string log = read_text_file(dir_.file("small.log"));
  EXPECT_EQ(log.substr(0, 64), std::string(64, 'x'));
  EXPECT_THAT(log, HasSubstr("the log stops here, after 64 bytes"));
  EXPECT_EQ(log.find("kiln-metric"), std::string::npos);
}

TEST_F(TrialOutputTest, AnEndlessLineIsLoggedAndJudgedByItsFirstBytes) {
  std::string endless(3 * kMaxMetricLine, 'x');
  say(endless + "\nkiln-metric loss=1 step=0\n");
  EXPECT_THAT(losses(output_->read()), ElementsAre(1));
  say("kiln-metric loss=1 " + endless + "\n");
  EXPECT_THAT([&] { output_->read(); }, ThrowsMessage<Error>(HasSubstr("trial.log line 3")));
}

}  // namespace trial_output_test
}  // namespace kiln::tune
