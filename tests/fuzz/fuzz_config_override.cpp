// `--set path=value` overrides, one per line, applied in order to a small config, as
// `kiln train --set a=1 --set b[0].c=x` does; each line's path is also parsed alone. Whatever
// the overrides leave must still write out as YAML (a run folder's config.yaml).

#include <cstdint>
#include <sstream>
#include <string>

#include "kiln/core/config.h"
#include "kiln/core/config_path.h"
#include "kiln/core/error.h"

namespace {

constexpr const char* kBase = R"(model: {name: mlp, hidden: [64, 32]}
train: {max: 2 epochs, optimizer: {name: adam, lr: 0.001}}
callbacks: [{name: early_stopping, patience: 3}]
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::RawConfig config;
  config.tree = kiln::parse_config_text(kBase, "base.yaml", false);
  config.origins.record("", config.tree, "base.yaml");
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(lines, line);) {
    try {
      kiln::parse_config_path(line.substr(0, line.find('=')));
    } catch (const kiln::Error&) {
    }
    try {
      kiln::apply_override(config, line);
      config.origins.find(line.substr(0, line.find('=')));
    } catch (const kiln::Error&) {
    }
  }
  kiln::to_yaml(config.tree);
  return 0;
}
