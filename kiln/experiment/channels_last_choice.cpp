#include "kiln/experiment/channels_last_choice.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kiln/data/partly_labelled.h"
#include "kiln/distributed/context.h"
#include "kiln/engine/device_feed.h"
#include "kiln/engine/evaluator.h"
#include "kiln/engine/precision.h"
#include "kiln/engine/train_state.h"
#include "kiln/experiment/precision_choice.h"
#include "kiln/experiment/training_session.h"

namespace kiln::experiment {

using engine::AutoSwitch;
namespace {

constexpr int kMostPairs = 5, kFewestPairs = 2;
constexpr double kTimingBudgetSeconds = 3;

double now_on(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize();  // a step ends when its kernels do
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

bool has_4d_kernels(const torch::nn::Module& model) {
  for (const torch::Tensor& parameter : model.parameters())
    if (parameter.dim() == 4) return true;
  return false;
}

// What a timed step changes besides time, saved to be put back.
class StepSideEffects {
 public:
  explicit StepSideEffects(models::Model& model)
      : model_(model), rng_(engine::capture_rng()), was_training_(model.is_training()) {
    torch::NoGradGuard no_grad;
    for (const torch::Tensor& buffer : model.buffers()) buffers_.push_back(buffer.clone());
  }
  ~StepSideEffects() {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> buffers = model_.buffers();
    for (size_t i = 0; i < buffers.size() && i < buffers_.size(); ++i)
      buffers[i].copy_(buffers_[i]);
    for (torch::Tensor& parameter : model_.parameters()) parameter.mutable_grad() = torch::Tensor();
    model_.train(was_training_);
    engine::restore_rng(rng_, "(the random generators' state before timing the layouts)");
  }
  StepSideEffects(const StepSideEffects&) = delete;
  StepSideEffects& operator=(const StepSideEffects&) = delete;

 private:
  models::Model& model_;
  Json rng_;
  bool was_training_;
  std::vector<torch::Tensor> buffers_;
};

double step_seconds(models::Model& model, engine::Objective& objective, const data::Batch& batch,
                    torch::Device device, engine::PrecisionMode precision) {
  double start = now_on(device);
  torch::Tensor loss;
  {
    engine::Precision::Autocast autocast(precision, device);
    loss = objective.compute(model, batch);
  }
  if (loss.requires_grad()) loss.backward();
  double seconds = now_on(device) - start;
  objective.reset();
  // Each step's gradients are made fresh, in the layout of the step's weights.
  for (torch::Tensor& parameter : model.parameters()) parameter.mutable_grad() = torch::Tensor();
  return seconds;
}

std::string ms_text(double ms) { return fmt::format("{:.1f} ms", ms); }

// The precision the first stage trains in, for timing under it: fp16 only on CUDA (elsewhere it
// is refused before training).
engine::PrecisionMode timed_precision(engine::PrecisionMode asked, torch::Device device) {
  engine::PrecisionMode used = choose_precision(asked, hardware_of(device)).used;
  return used == engine::PrecisionMode::kFp16 && !device.is_cuda() ? engine::PrecisionMode::kFp32
                                                                   : used;
}

// Rank 0's choice, made from the record or by timing the first training batch.
ChannelsLastChoice choose_on_rank0(RunSession& session, const Json& recorded) {
  const ExperimentConfig& config = session.experiment.config();
  AutoSwitch asked = config.runtime.channels_last;
  if (auto plain = channels_last_unmeasured(asked, has_4d_kernels(*session.model),
                                            config.train.deterministic))
    return *plain;
  if (auto kept = channels_last_recorded(recorded)) return *kept;
  data::Loader loader = session.experiment.loader("train");
  loader.start_epoch(0);
  std::optional<data::Batch> batch = loader.next();
  if (!batch || batch->size() == 0)
    return {asked, false, "auto: no training batch to time; contiguous", std::nullopt};
  torch::Device device = session.experiment.device();
  try {
    engine::Objective objective = session.experiment.build_objective(*session.model);
    // Unlabelled rows (data.labels_per_class) left out: the loss of the labelled ones times it.
    data::Batch timed =
        data::labelled_rows(engine::on_device(*batch, device), loader.dataset().info());
    return channels_last_from_times(time_layouts(*session.model, objective, timed, device,
                                                 timed_precision(config.train.precision, device)));
  } catch (const std::exception& e) {
    // The checks before training name what does not fit (a loss, a target) better than this.
    return {asked, false, std::string("auto: contiguous, as timing a step failed: ") + e.what(),
            std::nullopt};
  }
}

}  // namespace

Json ChannelsLastChoice::record() const {
  Json out = {{"asked", OptionTraits<AutoSwitch>::write(asked)}, {"used", used}, {"why", why}};
  if (times)
    out["step_ms"] = {{"contiguous", times->contiguous_ms},
                      {"channels_last", times->channels_last_ms}};
  return out;
}

std::optional<ChannelsLastChoice> channels_last_unmeasured(AutoSwitch asked, bool has_4d_kernels,
                                                           bool deterministic) {
  if (asked != AutoSwitch::kAuto)
    return ChannelsLastChoice{asked, asked == AutoSwitch::kOn, "asked by runtime.channels_last",
                              std::nullopt};
  if (!has_4d_kernels)
    return ChannelsLastChoice{asked, false,
                              "auto: the model has no 4-D kernels (convolutions) to store "
                              "channels-last",
                              std::nullopt};
  if (deterministic)
    return ChannelsLastChoice{asked, false,
                              "auto: contiguous under train.deterministic, so that a rerun "
                              "repeats bitwise",
                              std::nullopt};
  return std::nullopt;
}

ChannelsLastChoice channels_last_from_times(const LayoutTimes& times) {
  ChannelsLastChoice choice;
  choice.times = times;
  choice.used = times.channels_last_ms <= kChannelsLastMostShare * times.contiguous_ms;
  std::string measured = fmt::format("a training step took {} channels-last, {} contiguous",
                                     ms_text(times.channels_last_ms), ms_text(times.contiguous_ms));
  choice.why = choice.used
                   ? "auto: " + measured
                   : fmt::format(
                         "auto: {}; channels-last is kept only where at least {}% "
                         "faster",
                         measured, static_cast<int>(100 * (1 - kChannelsLastMostShare) + 0.5));
  return choice;
}

std::optional<ChannelsLastChoice> channels_last_recorded(const Json& run_record) {
  if (!run_record.is_object() || !run_record.contains("channels_last")) return std::nullopt;
  const Json& saved = run_record["channels_last"];
  if (!saved.is_object() || !saved.contains("used") || !saved["used"].is_boolean())
    return std::nullopt;
  ChannelsLastChoice choice;
  choice.used = saved["used"].get<bool>();
  choice.why = "auto: kept from the run's start (run.json)";
  if (saved.contains("step_ms") && saved["step_ms"].is_object()) {
    const Json& ms = saved["step_ms"];
    if (ms.value("contiguous", Json()).is_number() && ms.value("channels_last", Json()).is_number())
      choice.times = LayoutTimes{ms["contiguous"].get<double>(), ms["channels_last"].get<double>()};
  }
  return choice;
}

LayoutTimes time_layouts(models::Model& model, engine::Objective& objective,
                         const data::Batch& batch, torch::Device device,
                         engine::PrecisionMode precision) {
  StepSideEffects put_back(model);
  model.train();
  data::Batch channels_last = batch;
  channels_last.input = engine::as_channels_last(batch.input);
  auto step = [&](bool last) {
    if (last)
      engine::make_channels_last(model);
    else
      engine::make_channels_first(model);
    return step_seconds(model, objective, last ? channels_last : batch, device, precision);
  };
  double spent = step(false) + step(true);  // unmeasured: the first calls pick kernels
  std::vector<double> contiguous, last;
  while (contiguous.size() < kMostPairs &&
         (contiguous.size() < kFewestPairs || spent < kTimingBudgetSeconds)) {
    contiguous.push_back(step(false));
    last.push_back(step(true));
    spent += contiguous.back() + last.back();
  }
  engine::make_channels_first(model);
  return {1000 * median(contiguous), 1000 * median(last)};
}

ChannelsLastChoice decide_channels_last(RunSession& session, const Json& recorded,
                                        distributed::Context& context, std::FILE* out) {
  ChannelsLastChoice choice;
  if (context.rank() == 0) choice = choose_on_rank0(session, recorded);
  if (context.world_size() > 1) {
    bool used = context.broadcast(choice.used ? "1" : "0") == "1";
    if (context.rank() != 0)
      choice = {session.experiment.config().runtime.channels_last, used, "chosen by rank 0",
                std::nullopt};
  }
  session.experiment.use_channels_last(choice.used);
  if (choice.used)
    engine::make_channels_last(*session.model);
  else
    engine::make_channels_first(*session.model);
  // Said where there was a choice to make: a model with convolutions, left to auto.
  if (out && choice.asked == AutoSwitch::kAuto && has_4d_kernels(*session.model) &&
      context.rank() == 0)
    std::fprintf(out, "memory format: %s (%s)\n", choice.used ? "channels-last" : "contiguous",
                 choice.why.c_str());
  return choice;
}

}  // namespace kiln::experiment
