// Options structs read from config YAML, as every component reads its options: defaults, checks,
// unknown keys, nested mappings, lists, enums and periods. Resolved options are written into a
// run's folder as YAML and read back by `kiln eval` and resumes, so what was read must write,
// read back and write again to the same tree.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/schema.h"

namespace {

struct StepOptions {
  int32_t every = 1;
  double factor = 0.5;
  bool enabled = true;
  void describe(kiln::Schema& s) {
    s.field("every", every, "Steps between two.").min(1);
    s.field("factor", factor, "Multiplier.").in_range(0, 1);
    s.field("enabled", enabled, "On or off.");
  }
};

struct FuzzOptions {
  std::string name = "fuzz";
  int64_t epochs = 10;
  double lr = 0.1;
  std::optional<double> clip;
  std::vector<int64_t> hidden = {64, 32};
  std::vector<std::string> tags;
  std::map<std::string, int64_t> sizes;
  kiln::Mode mode = kiln::Mode::kMin;
  kiln::Period max{2, kiln::Period::Unit::kEpochs};
  kiln::OptionalPeriod warmup;
  StepOptions step;
  std::vector<StepOptions> stages;
  kiln::Json extra;
  void describe(kiln::Schema& s) {
    s.field("name", name, "Run name.");
    s.field("epochs", epochs, "Epochs.").min(0);
    s.field("lr", lr, "Learning rate.").in_range(0, 10);
    s.field("clip", clip, "Gradient clip.");
    s.field("hidden", hidden, "Widths.").each_min(1);
    s.field("tags", tags, "Tags.");
    s.field("sizes", sizes, "Named sizes.");
    s.field("mode", mode, "Direction.");
    s.field("max", max, "Length.");
    s.field("warmup", warmup, "Warm-up.");
    s.field("step", step, "Nested.");
    s.field("stages", stages, "Nested list.");
    s.field("extra", extra, "Anything.");
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOptions options;
  try {
    kiln::Json node = kiln::parse_config_text(
        std::string(reinterpret_cast<const char*>(data), size), "f.yaml", false);
    kiln::Origins origins;
    origins.record("", node, "f.yaml");
    kiln::read_options(options, node, kiln::ReadContext{"", &origins});
  } catch (const kiln::Error&) {
    return 0;
  }
  // Not inside the try: resolved options that do not read back are a finding. They travel as a
  // run folder's config.yaml does (training_run.cpp).
  kiln::Json written = kiln::write_options(options);
  FuzzOptions again;
  kiln::read_options(again, kiln::parse_config_text(kiln::to_yaml(written), "config.yaml", false),
                     kiln::ReadContext{"", nullptr});
  kiln::Json rewritten = kiln::write_options(again);
  auto text = [](const kiln::Json& j) {
    return j.dump(-1, ' ', false, kiln::Json::error_handler_t::replace);
  };
  if (text(rewritten) != text(written)) {
    std::fprintf(stderr, "resolved options %s read back as %s\n", text(written).c_str(),
                 text(rewritten).c_str());
    std::abort();
  }
  return 0;
}
