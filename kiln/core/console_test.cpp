// The console: plain lines when not on a terminal, a rate-limited bar on one (fake time only),
// train.log, and the bar and duration texts.

#include "kiln/core/console.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace console_test {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// Everything written to a FILE*, readable at any time because the console flushes each write.
class CapturedOutput {
 public:
  CapturedOutput() : file_(open_memstream(&buffer_, &size_)) {}
  ~CapturedOutput() {
    std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

ProgressState state_at(int64_t step) { return {step, 1000, 0.5, 0.25, 100, 1}; }

// Plain lines, no bar; each says when it was written and, once steps are counted, the time
// taken and the time left, as the bar would.
TEST(Console, NonInteractiveLinesCarryTheTimeTheElapsedTimeAndTheEta) {
  CapturedOutput out;
  double now = 1614834367;
  {
    Console console(out.file(), false, "", [&] { return now; });
    console.line("first");
    for (int64_t step = 1; step <= 50; ++step, now += 1)
      console.progress({step, 200, 0.5, 0.25, 100, double(step) * 3});
    console.line("second");
    console.finish();
  }
  // Step 50 of 200 after 150 s: 450 s left.
  EXPECT_THAT(out.text(), MatchesRegex("2021-03-0[34] [0-9]{2}:[0-9]{2}:07 first\n"
                                       "2021-03-0[34] [0-9]{2}:[0-9]{2}:57 "
                                       "\\[2:30 elapsed, ETA 7:30\\] second\n"));
}

TEST(Console, InteractiveBarRedrawsAtMostTenTimesPerSecondOfFakeTime) {
  CapturedOutput out;
  double now = 0;
  Console console(out.file(), true, "", [&] { return now; });
  // 256 updates over 4 s of fake time (1/64 s apart, exact in binary).
  for (int64_t step = 0; step < 256; ++step) {
    now = double(step) / 64;
    console.progress(state_at(step + 1));
  }
  size_t draws = count(out.text(), "ETA");
  EXPECT_LE(draws, 40u);
  EXPECT_GE(draws, 30u) << "the bar should keep up with time";
  EXPECT_EQ(count(out.text(), "\r\033[K"), draws);
  EXPECT_THAT(out.text(), Not(HasSubstr("\n")));
}

TEST(Console, InteractiveBarAlwaysDrawsTheFinalStep) {
  CapturedOutput out;
  double now = 5;
  Console console(out.file(), true, "", [&] { return now; });
  console.progress({999, 1000, 1, 0.1, 10, 1});
  console.progress({1000, 1000, 1, 0.1, 10, 1});  // same instant, but the last step
  EXPECT_EQ(count(out.text(), "ETA"), 2u);
  EXPECT_THAT(out.text(), HasSubstr("1000/1000"));
}

TEST(Console, InteractiveLinesClearTheBarAndFinishRemovesIt) {
  CapturedOutput out;
  double now = 0;
  Console console(out.file(), true, "", [&] { return now; });
  console.progress(state_at(1));
  console.line("validation at step 1");
  std::string text = out.text();
  EXPECT_THAT(text,
              MatchesRegex("\r\033\\[K\\[[^\n]* ETA [0-9:]+\r\033\\[Kvalidation at step 1\n"));
  console.progress(state_at(2));  // redrawn at once, below the line
  console.finish();
  text = out.text();
  EXPECT_EQ(count(text, "ETA"), 2u);
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");
  console.finish();  // nothing left to clear
  EXPECT_EQ(out.text(), text);
}

TEST(Console, AppendsTimeStampedLinesToTheLogButNotTheBar) {
  kiln::testing::TempDir dir;
  CapturedOutput out;
  double now = 1614834367;
  for (const char* text : {"first run", "second run"}) {
    Console console(out.file(), true, dir.file("train.log"), [&] { return now; });
    console.progress(state_at(1));
    console.line(text);
  }
  EXPECT_THAT(read_text_file(dir.file("train.log")),
              MatchesRegex("2021-03-0[34] [0-9]{2}:[0-9]{2}:07 \\[0:01 elapsed, ETA 16:39\\] "
                           "first run\n"
                           "2021-03-0[34] [0-9]{2}:[0-9]{2}:07 \\[0:01 elapsed, ETA 16:39\\] "
                           "second run\n"));
  EXPECT_THAT(out.text(), HasSubstr("\r\033[Kfirst run\n")) << "no stamp on a terminal";
}

TEST(ProgressBarText, FillsInProportionAndEstimatesTheRemainingTime) {
  EXPECT_EQ(progress_bar_text({15, 30, 1.5, 0.25, 1234.4, 30}, 10),
            "[=====>    ] 15/30 ep 1.50 loss 0.2500 1234 samples/s ETA 0:30");
  EXPECT_EQ(progress_bar_text({30, 30, 3, 0.125, 99.6, 600}, 10),
            "[==========] 30/30 ep 3.00 loss 0.1250 100 samples/s ETA 0:00");
  EXPECT_EQ(progress_bar_text({1, 3600, 0.01, 2, 1, 1}, 4),
            "[>   ] 1/3600 ep 0.01 loss 2.0000 1 samples/s ETA 59:59");
}

TEST(ProgressBarText, HasNoEstimateWithoutProgressOrTotal) {
  EXPECT_EQ(progress_bar_text({0, 30, 0, 0, 0, 0}, 4),
            "[>   ] 0/30 ep 0.00 loss 0.0000 0 samples/s ETA ?");
  EXPECT_THAT(progress_bar_text({7, 0, 0.5, 1, 2, 3}, 4),
              MatchesRegex("\\[>   \\] 7/0 .* ETA \\?"));
}

TEST(ProgressBarText, NeverOverfillsTheBar) {
  EXPECT_THAT(progress_bar_text({40, 30, 1, 1, 1, 1}, 6), ContainsRegex("^\\[======\\] 40/30"));
}

TEST(FormatDuration, UsesMinutesAndSecondsUnderAnHourThenHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(59.4), "0:59");
  EXPECT_EQ(format_duration(59.6), "1:00");
  EXPECT_EQ(format_duration(133), "2:13");
  EXPECT_EQ(format_duration(3599), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(36000 + 5), "10:00:05");
  EXPECT_EQ(format_duration(-5), "0:00");
}

}  // namespace console_test
}  // namespace kiln
