// train_state.json, as resuming a run reads it from a checkpoint that may be damaged or edited by
// hand. What is accepted must survive being written and read again unchanged.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/engine/train_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::engine::TrainState state = kiln::engine::parse_train_state(text, "train_state.json");
    kiln::Json once = kiln::engine::to_json(state);
    kiln::Json twice = kiln::engine::to_json(
        kiln::engine::parse_train_state(once.dump(), "train_state.json (written again)"));
    if (once != twice) std::abort();  // a value that does not read back as written
  } catch (const kiln::Error&) {
  }
  return 0;
}
