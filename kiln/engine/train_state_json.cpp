// train_state.json: TrainState to JSON and back, every value checked on the way in. Torch-free,
// so that the fuzz build (tests/fuzz) reads it as a checkpoint load does.

#include <cctype>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/json_number.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/train_state.h"

namespace kiln::engine {
namespace {

template <class T>
T required(const Json& json, const char* key, const std::string& file) {
  if (!json.is_object() || !json.contains(key))
    throw DataError(file, -1, -1, std::string("train state lacks \"") + key + "\"");
  try {
    return json.at(key).get<T>();
  } catch (const std::exception& e) {
    throw DataError(file, -1, -1, std::string("train state key \"") + key + "\": " + e.what());
  }
}

// Counts (steps, samples, epochs of the loader) are whole numbers from 0 to 2^53: a float, a
// negative or a larger number is a damaged or hand-edited file, and would be carried on into
// every later checkpoint (or wrap around in arithmetic) if taken.
int64_t count_at(const Json& json, const char* key, const std::string& file,
                 const std::string& parent = "") {
  constexpr int64_t kMaxCount = int64_t{1} << 53;
  Json value = required<Json>(json, key, file);
  bool fits = value.is_number_unsigned()  ? value.get<uint64_t>() <= uint64_t{kMaxCount}
              : value.is_number_integer() ? value.get<int64_t>() >= 0
                                          : false;
  if (!fits)
    throw DataError(file, -1, -1,
                    fmt::format("train state key \"{}{}\": expected a whole number from 0 to "
                                "2^53, got {}",
                                parent, key, show_value(value)));
  return value.get<int64_t>();
}

// A finite amount in [low, high] (epochs and seconds elapsed, the learning-rate multiplier).
double amount_at(const Json& json, const char* key, const std::string& file, double low,
                 double high, const std::string& parent = "") {
  Json value = required<Json>(json, key, file);
  if (!value.is_number() || !(value.get<double>() >= low && value.get<double>() <= high))
    throw DataError(file, -1, -1,
                    fmt::format("train state key \"{}{}\": expected a number from {} to {}, "
                                "got {}",
                                parent, key, low, high, show_value(value)));
  return value.get<double>();
}

// The latest values may be NaN or infinite (a diverged loss, a metric not yet defined).
Json values_json(const MetricValues& values) {
  Json json = Json::object();
  for (const auto& [tag, value] : values) json[tag] = number_to_json(value);
  return json;
}

// A value that may be infinite (a first best of inf).
double number_at(const Json& json, const char* key, const std::string& file) {
  Json value = required<Json>(json, key, file);
  try {
    return number_from_json(value);
  } catch (const Error& e) {
    throw DataError(file, -1, -1, fmt::format("train state key \"{}\": {}", key, e.what()));
  }
}

MetricValues values_from_json(const Json& json, const char* key, const std::string& file) {
  Json object = required<Json>(json, key, file);
  if (!object.is_object())
    throw DataError(file, -1, -1, fmt::format("train state key \"{}\" is not an object", key));
  MetricValues values;
  for (const auto& [tag, value] : object.items()) try {
      values[tag] = number_from_json(value);
    } catch (const Error& e) {
      throw DataError(file, -1, -1,
                      fmt::format("train state key \"{}\", tag \"{}\": {}", key, tag, e.what()));
    }
  return values;
}

Json progress_json(const Progress& p) {
  return {{"step", p.steps}, {"epoch", p.epochs}, {"samples", p.samples}, {"seconds", p.seconds}};
}

Progress progress_from_json(const Json& json, const std::string& file,
                            const std::string& parent = "") {
  constexpr double kForever = 1e15;
  return {count_at(json, "step", file, parent), amount_at(json, "epoch", file, 0, kForever, parent),
          count_at(json, "samples", file, parent),
          amount_at(json, "seconds", file, 0, kForever, parent)};
}

}  // namespace

Json to_json(const TrainState& s) {
  Json json = {{"step", s.progress.steps},
               {"epoch", s.progress.epochs},
               {"samples", s.progress.samples},
               {"seconds", s.progress.seconds},
               {"data", {{"epoch", s.data.epoch}, {"batch", s.data.batch}}},
               {"validated", s.validated},
               {"last", values_json(s.last)},
               {"callbacks", s.callbacks},
               {"loop", s.loop},
               {"rng", s.rng},
               {"lr_multiplier", s.lr_multiplier},
               {"rewinds", s.rewinds},
               {"precision", s.precision},
               {"scheduler", s.scheduler}};
  json["stage"] = {{"index", s.stage.index}, {"start", progress_json(s.stage.start)}};
  json["best"] = s.best ? Json{{"metric", s.best->metric},
                               {"value", number_to_json(s.best->value)},
                               {"step", s.best->step}}
                        : Json();
  return json;
}

TrainState train_state_from_json(const Json& json, const std::string& file) {
  TrainState s;
  s.progress = progress_from_json(json, file);
  // Checkpoints written before stages existed have none: stage 0, begun at zero.
  if (json.contains("stage")) {
    Json stage = required<Json>(json, "stage", file);
    s.stage = {count_at(stage, "index", file, "stage."),
               progress_from_json(required<Json>(stage, "start", file), file, "stage.start.")};
  }
  Json data = required<Json>(json, "data", file);
  s.data = {count_at(data, "epoch", file, "data."), count_at(data, "batch", file, "data.")};
  s.validated = required<bool>(json, "validated", file);
  s.last = values_from_json(json, "last", file);
  s.callbacks = required<Json>(json, "callbacks", file);
  // Checkpoints written before loops had state have none.
  if (json.contains("loop")) {
    s.loop = required<Json>(json, "loop", file);
    if (!s.loop.is_object())
      throw DataError(file, -1, -1,
                      "train state key \"loop\": expected an object, got " + show_value(s.loop));
  }
  s.rng = required<Json>(json, "rng", file);
  if (!s.rng.is_object())
    throw DataError(file, -1, -1, "train state key \"rng\": expected an object of generators");
  for (const auto& [name, state] : s.rng.items())
    if (!state.is_string())
      throw DataError(file, -1, -1,
                      fmt::format("train state key \"rng.{}\": expected a hex string, got {}", name,
                                  show_value(state)));
  s.lr_multiplier = amount_at(json, "lr_multiplier", file, 0, 1);
  s.rewinds = count_at(json, "rewinds", file);
  s.precision = required<Json>(json, "precision", file);
  // null, or fp16's loss scaler: a positive scale and the good steps since it last grew.
  if (!s.precision.is_null()) {
    if (!s.precision.is_object())
      throw DataError(file, -1, -1,
                      "train state key \"precision\": expected null or an object with "
                      "\"loss_scale\" and \"good_steps\", got " +
                          show_value(s.precision));
    amount_at(s.precision, "loss_scale", file, 1e-300, 1e300, "precision.");
    count_at(s.precision, "good_steps", file, "precision.");
  }
  s.scheduler = required<Json>(json, "scheduler", file);
  Json best = required<Json>(json, "best", file);
  if (!best.is_null())
    s.best = BestValue{required<std::string>(best, "metric", file), number_at(best, "value", file),
                       count_at(best, "step", file, "best.")};
  return s;
}

int64_t checkpoint_step(const std::string& dir) {
  std::string name = std::filesystem::path(dir).filename().string();
  // More than 18 digits is no step kiln wrote (and would overflow stoll).
  if (name.size() <= 5 || name.size() > 5 + 18 || name.compare(0, 5, "step-") != 0) return -1;
  for (size_t i = 5; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  return std::stoll(name.substr(5));
}

TrainState read_train_state(const std::string& checkpoint_dir) {
  std::string file = train_state_file(checkpoint_dir);
  TrainState state = parse_train_state(read_text_file(file), file);
  // A checkpoint's folder is named after its step: a state saying otherwise (edited by hand)
  // would resume at a step the run never reached.
  int64_t named = checkpoint_step(checkpoint_dir);
  if (named >= 0 && state.progress.steps != named)
    throw DataError(file, -1, -1,
                    fmt::format("train state key \"step\" is {}, but its folder is step {}",
                                state.progress.steps, named));
  return state;
}

TrainState parse_train_state(const std::string& text, const std::string& file) {
  Json json;
  try {
    json = parse_json_text(text);
  } catch (const JsonTextError& e) {
    throw DataError(file, -1, e.byte(), e.what());
  }
  return train_state_from_json(json, file);
}

}  // namespace kiln::engine
