#pragma once
// Which way a monitored value is better (train.mode, a callback's or a schedule's `mode`).
// Thread-safety: values.

#include "kiln/core/schema.h"

namespace kiln {

/// Lower is better (a loss) or higher is better (an accuracy).
enum class Mode { kMin, kMax };
/// As Mode, or `auto`: the run's train.mode.
enum class ModeOrAuto { kAuto, kMin, kMax };

inline EnumNameList<Mode> enum_names(Mode) { return {{Mode::kMin, "min"}, {Mode::kMax, "max"}}; }
inline EnumNameList<ModeOrAuto> enum_names(ModeOrAuto) {
  return {{ModeOrAuto::kAuto, "auto"}, {ModeOrAuto::kMin, "min"}, {ModeOrAuto::kMax, "max"}};
}

/// `mode`, with auto meaning `run_mode`.
inline Mode resolve_mode(ModeOrAuto mode, Mode run_mode) {
  if (mode == ModeOrAuto::kAuto) return run_mode;
  return mode == ModeOrAuto::kMax ? Mode::kMax : Mode::kMin;
}

}  // namespace kiln
