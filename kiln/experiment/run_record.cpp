#include "kiln/experiment/run_record.h"

#include <fmt/format.h>

#include <ctime>

#include "kiln/core/usable_cpus.h"
#include "kiln/engine/runtime.h"
#include "kiln/engine/trainer.h"
#include "kiln/experiment/run_environment.h"
#include "kiln/experiment/stages.h"
#include "kiln/run/run_directory.h"

namespace kiln::experiment {

namespace {

std::string time_text(double now) { return run::iso_time(static_cast<std::time_t>(now)); }

}  // namespace

RunRecord RunRecord::started(const std::string& command_line, double now, int world_size) {
  Json info = {
      {"status", "running"}, {"start_time", time_text(now)}, {"command_line", command_line}};
  info.update(environment_info());
  info["world_size"] = world_size;
  return RunRecord(std::move(info));
}

RunRecord RunRecord::resumed(Json saved, const std::string& command_line, double now,
                             int world_size) {
  saved["status"] = "running";
  saved.erase("end_time");
  saved.erase("error");
  if (!saved.contains("resumed")) saved["resumed"] = Json::array();
  saved["resumed"].push_back(
      {{"time", time_text(now)}, {"command_line", command_line}, {"world_size", world_size}});
  return RunRecord(std::move(saved));
}

void RunRecord::plan_stages(const std::vector<Stage>& stages) {
  if (!stages.front().staged()) return;
  info_["stages"] = Json::array();
  for (const Stage& stage : stages) info_["stages"].push_back({{"name", stage.name}});
}

void RunRecord::runtime_chosen(const engine::Runtime& runtime, bool threads_auto,
                               int64_t local_ranks) {
  std::string why = "asked by runtime.threads";
  if (threads_auto)
    why = fmt::format("auto: {}{}", usable_cpus().why,
                      local_ranks > 1 ? fmt::format(", shared by {} ranks", local_ranks) : "");
  info_["runtime"] = {
      {"device", runtime.device.str()}, {"threads", runtime.threads}, {"threads_why", why}};
}

void RunRecord::precision_chosen(const Stage& stage, const Json& precision) {
  if (stage.index == 0) info_["precision"] = precision;
  if (stage.staged()) info_["stages"][stage.index]["precision"] = precision;
}

void RunRecord::stage_ended(const Stage& stage, const engine::StageMark& mark,
                            const engine::TrainResult& result) {
  if (!stage.staged()) return;
  Json& record = info_["stages"][stage.index];
  Json precision = record.is_object() ? record.value("precision", Json()) : Json();
  record = {{"name", stage.name},
            {"start_step", mark.start.steps},
            {"end_step", result.progress.steps},
            {"status", result.stopped_by_signal ? "stopped" : "finished"}};
  if (!result.stop_reason.empty()) record["stop_reason"] = result.stop_reason;
  if (!precision.is_null()) record["precision"] = precision;
}

void RunRecord::ended(bool stopped_by_signal, double now) {
  info_["status"] = stopped_by_signal ? "stopped" : "finished";
  info_["end_time"] = time_text(now);
}

void RunRecord::pruned(const std::string& reason) {
  info_["status"] = "pruned";
  info_["stop_reason"] = reason;
}

void RunRecord::failed(const std::string& error, double now) {
  info_["status"] = "failed";
  info_["error"] = error;
  info_["end_time"] = time_text(now);
}

}  // namespace kiln::experiment
