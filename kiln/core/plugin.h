#pragma once
// Plugins: shared libraries of a user's own components. Loading one runs its KILN_REGISTER
// lines, which add to the registries of the running kiln, so its components are then listed
// and built by name like kiln's own (docs/extending.md).
// Thread-safety: call from the main thread before any registry is used.

#include <string>

namespace kiln {

/// Loads the shared library at `path` (a name without '/' is searched as dlopen does). Throws
/// UsageError naming the path and the loader's reason when it cannot be loaded, or what went
/// wrong registering its components (e.g. a name kiln already has).
void load_plugin(const std::string& path);

}  // namespace kiln
