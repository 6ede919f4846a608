#pragma once
// A kiln process that another started (a study's trial, a launcher's worker) stops when that
// parent dies, however it dies: a `kiln tune` or `kiln launch` killed with SIGKILL leaves no
// orphan training on into a run folder that the next `--resume` wants. The parent names itself
// in KILN_PARENT_PID; the child asks Linux for SIGTERM at the parent's death
// (PR_SET_PDEATHSIG), which it takes as any SIGTERM: a checkpoint, then the end. Linux sends it
// once for each thread of the dying parent, so a repeated SIGTERM must not end such a child.
// It ignores SIGPIPE, so that its parent's broken output pipe does not kill it before that.
// Thread-safety: stop_with_parent() first thing in main, before other threads start.

#include <string>
#include <utility>

namespace kiln {

/// {"KILN_PARENT_PID", this process's pid}: for the environment of a child to watch it.
std::pair<std::string, std::string> parent_variable();

/// When KILN_PARENT_PID is set: SIGTERM to this process when that parent dies, or now when it
/// is no longer this process's parent (it died before the request was made).
void stop_with_parent();

}  // namespace kiln
