#pragma once
// `kiln runs note RUN TEXT`: appends a paragraph to the run's notes.md (made when missing), for
// what a run turned out to show after it ended.
// Thread-safety: one writer of a run's notes at a time.

#include <string>

namespace kiln::run {

/// Throws UsageError when `run` is not a run folder, IoError when the file cannot be written.
void append_note(const std::string& run, const std::string& text);

}  // namespace kiln::run
