#include "kiln/board/board_studies.h"

#include <algorithm>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/tune/study.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

// Whether a parameter's distribution draws on a log scale (the board's axes follow it).
bool log_scaled(const Json& spec) {
  if (!spec.is_object()) return spec == "loguniform";
  // Compared as JSON, so a hand-edited type of the wrong kind is simply not log-scaled.
  return spec.value("type", Json()) == "loguniform" || spec.value("log", Json()) == true;
}

// How long a request waits for a study another process is writing: a study keeps its writes
// short, and a lock held longer (an open sqlite3 shell) would hold every worker of the board
// for the tuner's 60 s.
constexpr double kStudyBusySeconds = 2;

Json study_json(const fs::path& folder, const fs::path& base) {
  tune::Study study = tune::Study::open((folder / "study.db").string(), kStudyBusySeconds);
  tune::StudyInfo info = study.info();
  Json parameters = Json::array();
  const Json& tune = info.config.contains("tune") ? info.config["tune"] : Json();
  if (tune.is_object() && tune.contains("space") && tune["space"].is_object())
    for (const auto& [name, spec] : tune["space"].items())
      parameters.push_back({{"name", name}, {"log", log_scaled(spec)}});
  Json trials = Json::array();
  for (const tune::TrialRecord& t : study.trials())
    trials.push_back({{"number", t.number},
                      {"state", tune::state_name(t.state)},
                      {"value", t.value ? Json(*t.value) : Json()},
                      {"values", t.values},
                      {"run", fs::relative(folder / t.run_dir, base).string()}});
  return {{"name", info.name},
          {"metric", info.metric},
          {"mode", info.maximize ? "max" : "min"},
          {"parameters", parameters},
          {"trials", trials}};
}

}  // namespace

Json studies_payload(const std::string& root) {
  fs::path base = fs::canonical(root);
  Json studies = Json::array();
  std::error_code error;
  // Symbolic links are not followed: nothing outside the root is read.
  for (fs::recursive_directory_iterator
           at(base, fs::directory_options::skip_permission_denied, error),
       end;
       !error && at != end; at.increment(error)) {
    // The entry's own status, not its target's: a study.db that links out of the root is skipped.
    std::error_code unknown;
    if (at->path().filename() != "study.db" || !fs::is_regular_file(at->symlink_status(unknown)))
      continue;
    fs::path folder = at->path().parent_path();
    Json entry;
    try {
      entry = study_json(folder, base);
    } catch (const Error& e) {
      entry = {{"problem", e.what()}};
    }
    entry["study"] = fs::relative(folder, base).string();
    studies.push_back(entry);
  }
  std::sort(studies.begin(), studies.end(),
            [](const Json& a, const Json& b) { return a["study"] < b["study"]; });
  return {{"studies", studies}};
}

}  // namespace kiln::board
