#include "kiln/core/plugin.h"

#include <dlfcn.h>

#include "kiln/core/error.h"
#include "kiln/core/registry.h"

namespace kiln {

void load_plugin(const std::string& path) {
  size_t problems_before = registration_errors().size();
  // RTLD_GLOBAL: a plugin may build on another one loaded before it.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    std::string reason = error ? error : "unknown reason";
    if (reason.rfind(path + ": ", 0) == 0) reason.erase(0, path.size() + 2);  // said once already
    throw UsageError(fmt::format("cannot load plugin {}: {}", path, reason));
  }
  // The library stays loaded for the life of the process: its components are in the registries.
  if (registration_errors().size() > problems_before)
    throw UsageError(fmt::format("plugin {}: {}", path, registration_errors().at(problems_before)));
}

}  // namespace kiln
