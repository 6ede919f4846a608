// export: writes the model as a new version folder while training runs (export/export.h), so
// that a server polling the folder picks it up: after each validation that improves the monitored
// tag (`when: best`), after every validation (`validation`) or once at the end (`end`), keeping
// the newest `keep` versions. It exports the checkpoint it asks the trainer for at that step, so
// a version holds exactly what that checkpoint holds (the EMA's weights when the run keeps one).

#include <fmt/format.h>

#include <algorithm>

#include "kiln/core/json_number.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/callbacks/monitor.h"
#include "kiln/export/export.h"
#include "kiln/serving/version_folders.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace {

enum class ExportWhen { kBest, kValidation, kEnd };
inline EnumNameList<ExportWhen> enum_names(ExportWhen) {
  return {{ExportWhen::kBest, "best"},
          {ExportWhen::kValidation, "validation"},
          {ExportWhen::kEnd, "end"}};
}

struct ExportOptions {
  ExportWhen when = ExportWhen::kBest;
  int64_t keep = 5;
  std::string to;
  std::string name;
  std::string format = "kiln";
  bool portable = false;
  engine::MonitorOptions compare;
  void describe(Schema& s) {
    s.field("when", when,
            "best: after each validation that improves `monitor`; validation: after every "
            "validation; end: once, when training ends.");
    s.field("keep", keep, "How many of the newest versions to keep.").min(1);
    s.field("to", to, "Folder of exported models; empty: the run's export/.");
    s.field("name", name, "The model's folder there; empty: the config's name.");
    s.field("format", format, "kiln: kiln's own files; onnx: model.onnx too (docs/onnx.md).")
        .check(
            [](const std::string& f) {
              const auto& known = export_formats();
              return std::find(known.begin(), known.end(), f) != known.end();
            },
            "one of: kiln, onnx");
    s.field("portable", portable,
            "onnx: only operators that runtimes with few read, such as OpenCV 4.6: LSTM and GRU "
            "layers step by step, integers as floats, embeddings as one-hot products "
            "(docs/onnx.md).");
    compare.describe(s);
  }
};

class ExportCallback : public engine::Callback {
 public:
  explicit ExportCallback(const ExportOptions& o) : options_(o) {}

  void check(const engine::TrainOptions& train,
             const std::vector<std::string>& monitorable) const override {
    if (options_.portable && options_.format != "onnx")
      throw ConfigError(config_path + ".portable", "",
                        "a portable graph is an ONNX one: set format: onnx too");
    if (options_.when == ExportWhen::kBest)
      engine::ResolvedMonitor(options_.compare, train, monitorable, config_path);
  }
  void on_fit_begin(engine::TrainerView& view) override {
    if (options_.when == ExportWhen::kBest)
      compare_ = engine::ResolvedMonitor(options_.compare, view.options(), view.monitorable(),
                                         config_path);
  }
  void on_validation_end(engine::TrainerView& view, const engine::MetricValues&) override {
    if (options_.when == ExportWhen::kValidation ||
        (options_.when == ExportWhen::kBest && best(view)))
      request(view);
  }
  void on_fit_end(engine::TrainerView& view) override {
    if (options_.when == ExportWhen::kEnd) request(view);
  }
  void on_checkpoint_saved(engine::TrainerView& view, const std::string& dir) override {
    if (!pending_) return;
    pending_ = false;
    ExportedVersion exported =
        export_model({dir, "", options_.to, options_.name, options_.format, options_.portable});
    serving::keep_newest_versions(exported.base, options_.keep);
    view.say(fmt::format("exported version {}: {}", exported.version, exported.directory));
  }
  Json state() const override { return {{"best", best_ ? number_to_json(*best_) : Json()}}; }
  void load_state(const Json& state) override {
    if (state.contains("best") && !state.at("best").is_null())
      best_ = number_from_json(state.at("best"));
  }

 private:
  // Whether the validation just ended measured a new best (a NaN never is one).
  bool best(engine::TrainerView& view) {
    auto it = view.last_values().find(compare_.monitor);
    if (it == view.last_values().end() || !engine::improves(it->second, best_, compare_.mode))
      return false;
    best_ = it->second;
    return true;
  }
  void request(engine::TrainerView& view) {
    pending_ = true;
    view.request_checkpoint();
  }

  ExportOptions options_;
  engine::ResolvedMonitor compare_;
  std::optional<double> best_;
  bool pending_ = false;
};

}  // namespace

KILN_REGISTER(engine::callback_registry, "export", ExportCallback, ExportOptions,
              "Exports the model as a new version folder for kiln serve while training runs.");

}  // namespace kiln::exports
