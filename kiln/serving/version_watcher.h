#pragma once
// Keeps a ModelTable in step with the models' base paths (hot reload): each poll lists a model's
// version folders, loads the ones its version policy serves that are not loaded yet, and drops
// the ones it no longer serves. A request in flight keeps the version it found until it has
// answered. A version that fails to load is reported once, with its reason, and left out while
// the others go on serving.
// Thread-safety: poll() from one thread (the server's watcher).

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/serving/model_config.h"
#include "kiln/serving/model_table.h"

namespace kiln::serving {

class VersionWatcher {
 public:
  /// Loads a version folder of `model`; throws with the reason it cannot.
  using Loader = std::function<std::shared_ptr<Servable>(const std::string& model,
                                                         const std::string& directory)>;
  /// Told of every version loaded, dropped, or refused.
  using Log = std::function<void(const std::string& line)>;

  VersionWatcher(std::vector<ServedModel> models, ModelTable& table, Loader loader, Log log);

  /// One pass over every model's base path.
  void poll();

 private:
  struct Watched {
    ServedModel config;
    Versions loaded;
    std::set<int64_t> refused;
  };
  void poll(Watched& model);

  std::vector<Watched> models_;
  ModelTable& table_;
  Loader loader_;
  Log log_;
};

}  // namespace kiln::serving
