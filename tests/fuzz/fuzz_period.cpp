// Periods with units (`2 epochs`, `30 min`), as config values give them, then used the ways the
// trainer and the schedulers use them. The text is a random-length string; the rest of the input
// gives an epoch's size in steps, a batch size and two progress points. A parsed period must read
// back from its own to_string(), which is how resolved configs store it.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/period.h"

namespace {

kiln::Progress consume_progress(FuzzedDataProvider& input) {
  kiln::Progress progress;
  progress.steps = input.ConsumeIntegralInRange<int64_t>(0, int64_t{1} << 40);
  progress.epochs = input.ConsumeFloatingPointInRange<double>(0, 1e6);
  progress.samples = input.ConsumeIntegralInRange<int64_t>(0, int64_t{1} << 50);
  progress.seconds = input.ConsumeFloatingPointInRange<double>(0, 1e8);
  return progress;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  std::string text = input.ConsumeRandomLengthString();
  kiln::Period period;
  try {
    period = kiln::Period::parse(text);
  } catch (const kiln::Error&) {
    return 0;
  }
  // Not inside the try: a period kiln printed that kiln cannot read is a finding.
  kiln::Period again = kiln::Period::parse(period.to_string());
  if (again.amount() != period.amount() || again.unit() != period.unit()) {
    std::fprintf(stderr, "period \"%s\" reads back from \"%s\" as \"%s\"\n", text.c_str(),
                 period.to_string().c_str(), again.to_string().c_str());
    std::abort();
  }
  // As the schedulers and the trainer call them: whole steps per epoch, at least one sample.
  int64_t steps_per_epoch = input.ConsumeIntegralInRange<int64_t>(1, int64_t{1} << 30);
  int64_t batch = input.ConsumeIntegralInRange<int64_t>(1, int64_t{1} << 20);
  period.in_steps(static_cast<double>(steps_per_epoch), static_cast<double>(batch));
  kiln::Progress before = consume_progress(input), now = consume_progress(input);
  period.crossed(before, now);
  period.reached(now);
  return 0;
}
