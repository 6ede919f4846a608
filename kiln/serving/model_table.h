#pragma once
// The models a server answers for: per model name its loaded versions and their labels, swapped
// whole when versions come and go (hot reload), so that a request holds the version it found
// until it has answered, however the table changes meanwhile.
// Thread-safety: every member may be called from any thread.

#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kiln/serving/route.h"
#include "kiln/serving/servable.h"

namespace kiln::serving {

using Versions = std::map<int64_t, std::shared_ptr<Servable>>;

struct FoundVersion {
  int64_t version = 0;
  std::shared_ptr<Servable> servable;
};

class ModelTable {
 public:
  /// Makes `versions` (and `labels`, label -> version) what `model` serves; no versions removes
  /// the model.
  void set(const std::string& model, Versions versions, std::map<std::string, int64_t> labels = {});

  /// The version a route names: its number, its label, or the latest. ServingError (kNotFound)
  /// with TensorFlow Serving's messages otherwise.
  FoundVersion find(const Route& route) const;

  /// The loaded versions of `model` (all, or the one `route` names), newest first as TensorFlow
  /// Serving lists them, for a status request; ServingError (kNotFound) with its messages when
  /// there are none.
  std::vector<int64_t> status_versions(const Route& route) const;

  /// Whether `model` is served now.
  bool serves(const std::string& model) const;

  /// Every model with the number of versions it serves.
  std::map<std::string, size_t> models() const;

 private:
  struct Model {
    Versions versions;
    std::map<std::string, int64_t> labels;
  };
  mutable std::shared_mutex mutex_;
  std::map<std::string, Model> models_;
};

}  // namespace kiln::serving
