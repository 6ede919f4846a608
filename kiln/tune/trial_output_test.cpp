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
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("a link, a FIFO or a device took its place")));
  ASSERT_EQ(::unlink(dir_.file("metrics.jsonl").c_str()), 0);  // removed: nothing to read
  EXPECT_TRUE(output_->read().empty());
}

// A file that grows as fast as it is read is taken a bounded piece per call, so that the study
// goes on to its other trials between calls; every line is still read, in order.
TEST_F(TrialOutputTest, AGrowingMetricsFileIsReadABoundedPieceAtATime) {
  std::string many;
  for (int step = 0; many.size() < (4 << 20); ++step)
    many += "{\"loss\": 1, \"step\": " + std::to_string(step) + "}\n";
  append_metrics(many);
  size_t first = output_->read().size(), total = first;
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, size_t(std::count(many.begin(), many.end(), '\n')));
  for (int call = 0; call < 100; ++call) total += output_->read().size();
  EXPECT_EQ(total, size_t(std::count(many.begin(), many.end(), '\n')));
}

TEST_F(TrialOutputTest, AMalformedReportIsNamedByItsFileAndLine) {
  say("hello\nkiln-metric loss=low step=1\n");
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("trial.log line 2: loss=low is no finite number")));
  append_metrics("{\"loss\": 1}\n{\"loss\": 1,\n");
  EXPECT_THAT([&] { output_->read(); },
              ThrowsMessage<Error>(HasSubstr("metrics.jsonl line 2: not JSON")));
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
