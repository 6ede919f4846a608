// The trainer's checkpoints: what it saves of its whole state (weights, optimizer, schedules,
// callbacks, the loop, random generators, data position) and how it takes all of that up again
// to continue where a checkpoint was taken.

#include <filesystem>

#include "kiln/engine/trainer.h"

namespace kiln::engine {

void Trainer::resume(const TrainState& state, const std::string& checkpoint_dir) {
  load_model_weights(checkpoint_dir, parts_.model);
  load_optimizer_state(checkpoint_dir, parts_.optimizer);
  progress_ = state.progress;
  validated_ = state.validated;
  result_.best = state.best;
  result_.last = state.last;
  restore_rng(state.rng, train_state_file(checkpoint_dir));
  parts_.train.seek(state.data);
  load_scheduler_state(state.scheduler, train_state_file(checkpoint_dir));
  for (Callback* callback : parts_.callbacks) {
    if (state.callbacks.contains(callback->type))
      callback->load_state(state.callbacks.at(callback->type));
    std::string tensors = checkpoint_dir + "/" + callback->type + ".safetensors";
    if (std::filesystem::exists(tensors)) callback->load_tensors(read_tensor_file(tensors));
  }
  loop_->load_state(state.loop, train_state_file(checkpoint_dir));
  std::string loop_tensors = checkpoint_dir + "/" + loop_->tensor_file() + ".safetensors";
  if (std::filesystem::exists(loop_tensors)) {
    try {
      loop_->load_tensors(read_tensor_file(loop_tensors));
    } catch (const DataError&) {
      throw;
    } catch (const Error& e) {
      throw DataError(loop_tensors, -1, -1, e.what());
    }
  }
  lr_multiplier_ = state.lr_multiplier;
  rewinds_ = state.rewinds;
  precision_.scaler().load_state(state.precision);
  saved_step_ = progress_.steps;
  result_.checkpoint = checkpoint_dir;
}

void Trainer::load_scheduler_state(const Json& state, const std::string& file) {
  // A checkpoint from before schedules had state, or of a schedule without any, holds none.
  if (!parts_.scheduler || state.empty()) return;
  try {
    parts_.scheduler->load_state(state);
  } catch (const std::exception& e) {
    throw DataError(file, -1, -1, std::string("the scheduler's state does not fit: ") + e.what());
  }
}

TrainState Trainer::capture_state() const {
  TrainState state;
  state.progress = progress_;
  state.stage = parts_.stage;
  state.data = parts_.train.position();
  state.validated = validated_;
  state.best = result_.best;
  state.last = result_.last;
  state.rng = capture_rng();
  state.lr_multiplier = lr_multiplier_;
  state.rewinds = rewinds_;
  state.precision = precision_.scales_loss() ? precision_.scaler().state() : Json();
  if (parts_.scheduler) state.scheduler = parts_.scheduler->state();
  for (const Callback* callback : parts_.callbacks)
    state.callbacks[callback->type] = callback->state();
  state.loop = loop_->state();
  return state;
}

void Trainer::save_checkpoint() {
  checkpoint_requested_ = false;
  if (parts_.checkpoints_dir.empty() || !parts_.saves_checkpoints) return;
  CheckpointContents contents{progress_.steps,    &parts_.model,
                              &parts_.optimizer,  to_json(capture_state()),
                              parts_.config_yaml, {},
                              parts_.inputs};
  for (const Callback* callback : parts_.callbacks) {
    NamedTensors tensors = callback->tensors();
    if (!tensors.empty()) contents.tensor_files[callback->type] = std::move(tensors);
  }
  NamedTensors loop_tensors = loop_->tensors();
  if (!loop_tensors.empty()) contents.tensor_files[loop_->tensor_file()] = std::move(loop_tensors);
  result_.checkpoint = engine::save_checkpoint(parts_.checkpoints_dir, contents);
  saved_step_ = progress_.steps;
  for (Callback* callback : parts_.callbacks)
    callback->on_checkpoint_saved(*this, result_.checkpoint);
}

}  // namespace kiln::engine
