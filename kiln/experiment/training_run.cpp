#include "kiln/experiment/training_run.h"

#include <unistd.h>

#include <ctime>

#include "kiln/core/json_text.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/engine/runtime.h"
#include "kiln/engine/trainer.h"
#include "kiln/experiment/channels_last_choice.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/job_start.h"
#include "kiln/experiment/open_model.h"
#include "kiln/experiment/precision_choice.h"
#include "kiln/experiment/resume.h"
#include "kiln/experiment/run_folder.h"
#include "kiln/experiment/tensorboard_callbacks.h"
#include "kiln/experiment/tensorboard_graph.h"
#include "kiln/experiment/training_loop.h"
#include "kiln/experiment/training_session.h"
#include "kiln/experiment/trial_reporter.h"
#include "kiln/models/summary.h"
#include "kiln/run/run_info.h"

namespace kiln::experiment {

using Stages = std::vector<Stage>;  // a run's, in order

namespace {

Json summary_json(const engine::TrainResult& result) {
  Json summary = Json::object();
  summary["final"] = Json::object();
  for (const auto& [tag, value] : result.last) summary["final"][tag] = value;
  summary["best"] = result.best ? Json{{"metric", result.best->metric},
                                       {"value", result.best->value},
                                       {"step", result.best->step}}
                                : Json();
  summary["steps"] = result.progress.steps;
  summary["epochs"] = result.progress.epochs;
  summary["samples"] = result.progress.samples;
  summary["seconds"] = result.progress.seconds;
  return summary;
}

// The newest valid checkpoint of a run being resumed ("" when it saved none: the run starts
// over), with the run's files trimmed back to it so nothing is logged or kept twice. When it saved
// some and none is valid, checkpoints and metrics stay: starting over would delete its history.
std::string prepare_resume(RunFolder& run, Console& console) {
  std::vector<std::string> warnings;
  std::string checkpoint;
  try {
    checkpoint = engine::find_checkpoint(run.path(), "last", &warnings);
  } catch (const UsageError&) {
    // None was saved: the run starts again from its beginning.
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                "; its checkpoints and metrics.csv are left as they are (to train again, start a "
                "new run)");
  }
  for (const auto& warning : warnings) console.line("warning: " + warning);
  run.rewind_to(checkpoint.empty() ? -1 : engine::checkpoint_step(checkpoint));
  if (checkpoint.empty()) console.line("resuming: no valid checkpoint yet; starting over");
  return checkpoint;
}

// Whether a run being resumed finished with the config it is resumed with: then there is
// nothing to train, and its files stay as they are.
bool finished_as_configured(const run::RunDirectory& run, const ExperimentConfig& config) {
  // Compared as JSON: a hand-edited status of another type is simply not "finished".
  if (run::read_record(run.path()).value("status", Json()) != "finished") return false;
  RawConfig saved = load_config({run.file(run::kConfigFile)}, {});
  return resolved_config(parse_experiment(saved)) == resolved_config(config);
}

// Where a stage's training data starts after the stage before it ended at `previous`: on from
// there when the new stage reads the same batches, else (another batch size, drop_last or
// shuffle) at the next epoch, so no example is seen twice in an epoch.
data::LoaderPosition next_position(const data::LoaderPosition& previous, int64_t per_epoch,
                                   const data::DataOptions& before,
                                   const data::DataOptions& after) {
  bool same_batches = before.batch_size == after.batch_size &&
                      before.drop_last == after.drop_last && before.shuffle == after.shuffle;
  if (previous.batch < per_epoch && same_batches) return previous;
  return {previous.epoch + 1, 0};
}

// How the run ended, in TensorBoard's HParams tab; a failure to write it must not hide why the
// run ended.
void end_hparams(RunFolder& run, tensorboard::SessionStatus status, double now) {
  if (!run.events() || !run.tensorboard_options().hparams) return;
  try {
    run.events()->hparams_end(status, now);
  } catch (const std::exception&) {
    if (status != tensorboard::SessionStatus::kFailure) throw;
  }
}

struct StageLoop {
  RunFolder& run;
  RunSession& session;
  const Stages& stages;
  const TrainRequest& request;
  const std::string& config_yaml;  // the run's resolved config, saved in every checkpoint
  Console& console;
  engine::MetricSink& metrics;
  Clock clock;
  RunRecord& record;
  TensorBoardCallbacks& tensorboard;

  engine::TrainerParts parts(StageSession& stage, const engine::StageMark& mark) {
    engine::TrainerParts parts =
        stage.parts(session, run.checkpoints(), config_yaml, request.stop_signal, mark);
    tensorboard.join(parts.callbacks, stage.val_objective, *session.model);
    parts.context = request.context;
    if (request.trial && run.writes()) parts.callbacks.push_back(request.trial.get());
    parts.saves_checkpoints = run.writes();
    parts.inputs = inputs_json(session.inputs, session.labels);
    return parts;
  }

  // Trains stages from `first` on: the first from `checkpoint` when resuming, each later one
  // from where the stage before it ended.
  engine::TrainResult train(size_t first, const std::string& checkpoint,
                            const std::optional<engine::TrainState>& resumed) {
    engine::TrainResult result;
    data::LoaderPosition ended;
    int64_t per_epoch = 0;
    std::optional<LoopCarry> carried;  // the stage before's loop
    for (size_t i = first; i < stages.size(); ++i) {
      std::unique_ptr<StageSession> stage = open_stage(session, stages[i]);
      if (i == first) describe(*stage);
      if (i == first && !resumed) {
        start_hparams(*stage);
        write_graph();
      }
      if (stages[i].staged()) console.line(stages[i].title());
      engine::StageMark mark = resumed && i == first
                                   ? resumed->stage
                                   : engine::StageMark{static_cast<int64_t>(i), result.progress};
      std::unique_ptr<engine::StepProfiler> profiler = profiler_for(stages[i].config.train);
      engine::TrainerParts trainer_parts = parts(*stage, mark);
      trainer_parts.profiler = profiler.get();
      engine::TrainOptions train = stages[i].config.train;
      train.precision = precision_of(stages[i], trainer_parts.device);
      engine::Trainer trainer(trainer_parts, train, metrics, console, clock);
      if (resumed && i == first) {
        trainer.resume(*resumed, checkpoint);
        console.line(fmt::format("resumed from {} at step {}", checkpoint,
                                 engine::checkpoint_step(checkpoint)));
      } else if (i != first) {
        stage->train.seek(
            next_position(ended, per_epoch, stages[i - 1].config.data, stages[i].config.data));
        trainer.continue_from(result);
        take_up(*stage->loop, carried);
      }
      result = trainer.fit();
      carried = loop_carry(*stage->loop);
      if (!result.checkpoint.empty()) console.line("checkpoint: " + result.checkpoint);
      record.stage_ended(stages[i], mark, result);
      run.write_record(record);
      if (result.stopped_by_signal) break;
      ended = result.data_position;
      per_epoch = stage->train.batches_per_epoch();
    }
    return result;
  }

  // train.precision decided on this machine (auto), said and recorded in run.json.
  engine::PrecisionMode precision_of(const Stage& stage, torch::Device device) {
    StagePrecision precision = decide_precision(stage.config.train.precision, device, console);
    record.precision_chosen(stage, precision.record);
    run.write_record(record);
    return precision.used;
  }

  // train.profile's window, written to RUN/trace.json as it closes (by rank 0).
  std::unique_ptr<engine::StepProfiler> profiler_for(const engine::TrainOptions& train) {
    if (!train.profile || !run.writes()) return nullptr;
    return std::make_unique<engine::StepProfiler>(
        train.profile->from, train.profile->to, clock,
        [this, window = *train.profile](const engine::StepProfiler& profiler) {
          if (profiler.steps().empty()) {
            console.line(fmt::format("train.profile: no step from {} to {} was taken here",
                                     window.from, window.to));
            return;
          }
          run.write_trace(profiler.chrome_trace().to_json());
          console.line(
              fmt::format("profile of steps {} to {}: {}/trace.json (chrome://tracing, "
                          "ui.perfetto.dev)",
                          profiler.steps().front().step, profiler.steps().back().step, run.path()));
        });
  }

  // TensorBoard's HParams tab: the values the config file and --set gave (the defaults every run
  // shares would only crowd the table), compared by what validation and training measure.
  void start_hparams(const StageSession& stage) {
    if (!run.events() || !run.tensorboard_options().hparams) return;
    std::vector<tensorboard::HParamsMetric> metrics;
    for (const std::string& tag : monitorable_tags(stage.objective, stage.val.has_value())) {
      size_t slash = tag.find('/');
      metrics.push_back({tag.substr(0, slash), tag.substr(slash + 1)});
    }
    run.events()->hparams_start(tensorboard::flatten_hparams(request.config.tree), metrics,
                                stages.front().config.name, clock());
  }

  // TensorBoard's Graphs tab. A model the trace cannot run on a zero example still trains.
  void write_graph() {
    if (!run.events() || !run.tensorboard_options().graph || session.inputs.empty()) return;
    try {
      write_model_graph(*run.events(), *session.model, session.inputs.front(), clock());
    } catch (const std::exception& e) {
      console.line(std::string("tensorboard.graph: the model's graph is not written: ") + e.what());
    }
  }

  void describe(StageSession& stage) {
    console.line(fmt::format("model: {}; {} training examples, {} steps per epoch; {}",
                             models::parameters_text(*session.model), stage.train.dataset().size(),
                             stage.train.batches_per_epoch(), session.experiment.device().str()));
    if (!session.init_report.empty() && request.resume_dir.empty())
      console.line(session.init_report);
  }
};

engine::TrainResult train_in(RunFolder& run, RunSession& s, const Stages& stages,
                             const TrainRequest& request, const std::string& config_yaml,
                             std::FILE* out, Clock clock, RunRecord& record) {
  Console console(request.quiet ? nullptr : out, ::isatty(::fileno(out)) != 0, run.console_log(),
                  clock);
  std::string checkpoint;
  if (!request.resume_dir.empty()) {
    // Rank 0 chooses (and repairs, and trims the folder to) the checkpoint; the others take it.
    if (run.writes()) checkpoint = prepare_resume(run, console);
    checkpoint = request.context->broadcast(checkpoint);
  }
  std::optional<engine::TrainState> resumed;
  if (!checkpoint.empty()) resumed = engine::read_train_state(checkpoint);
  size_t first = resumed ? static_cast<size_t>(resumed->stage.index) : 0;
  if (first >= stages.size())
    throw Error(fmt::format("{} was taken in stage {}, but the config has {} stage(s)", checkpoint,
                            first + 1, stages.size()));
  engine::ConsoleMetricSink console_lines(console);
  engine::MetricSinks sinks({&run.metrics(), &console_lines});
  TensorBoardCallbacks tensorboard(run.events(), run.tensorboard_options(), s.labels, clock);
  StageLoop loop{run, s, stages, request, config_yaml, console, sinks, clock, record, tensorboard};
  return loop.train(first, checkpoint, resumed);
}

// The run's folder: the one resumed, the one the command or a launcher names, or a new one that
// rank 0 makes and names for every process.
run::RunDirectory run_directory(const TrainRequest& request, const ExperimentConfig& config,
                                Clock& clock) {
  if (!request.resume_dir.empty()) return run::RunDirectory::open(request.resume_dir);
  bool first = request.context->rank() == 0;
  if (!request.run_dir.empty())
    return first ? run::RunDirectory::create_at(request.run_dir)
                 : run::RunDirectory::named(request.run_dir);
  if (!first) return run::RunDirectory::named(request.context->broadcast(""));
  run::RunDirectory made =
      run::RunDirectory::create(request.runs_root, config.name, static_cast<std::time_t>(clock()));
  request.context->broadcast(made.path());
  return made;
}

// Feature columns: a resumed run reuses what it fitted; a new one fits on rank 0, which gives the
// result to the other ranks.
ColumnFitting column_fitting(const run::RunDirectory& run, bool resuming,
                             std::shared_ptr<distributed::Context> context) {
  ColumnFitting fitting = resuming ? saved_columns(run.path()) : ColumnFitting{};
  fitting.share = [context](const std::function<Json()>& fit) {
    if (context->world_size() == 1) return fit();
    // parse_json_text: linear in an object's keys (a vocabulary may have a hundred thousand).
    return parse_json_text(context->broadcast(context->rank() == 0 ? fit().dump() : ""));
  };
  return fitting;
}

// --dry-run: the config builds, every stage checks and the loss and metrics fit the model.
TrainOutcome check_dry_run(const Stages& stages, const engine::Runtime& runtime, std::FILE* out) {
  RunSession session(stages.front().config, runtime.device);
  check_stages(session, stages);
  std::fprintf(out, "config ok: model has %s\n", models::parameters_text(*session.model).c_str());
  return {};
}

void announce_run(const RunFolder& run, std::FILE* out) {
  std::fprintf(out, "run: %s\n", run.path().c_str());
  std::fflush(out);
}

TrainOutcome nothing_to_resume(const RunFolder& run, std::FILE* out) {
  std::fprintf(out,
               "the run has finished; nothing to resume (to train it further, raise train.max "
               "with --set)\n");
  return {run.path(), 0};
}

// The config the run trains with, as YAML: on resume the saved one stays (resumable overrides
// are recorded with the attempt).
std::string run_config_yaml(const RunFolder& run, const ExperimentConfig& config, bool resuming) {
  return resuming ? read_text_file(run.directory().file(run::kConfigFile))
                  : to_yaml(resolved_config(config));
}

// run.json for this attempt (a new run, or a resumed one), written with the config and notes
// a new run starts with.
RunRecord open_record(RunFolder& run, const TrainRequest& request, const Stages& stages,
                      const std::string& config_yaml, const Clock& clock) {
  bool resuming = !request.resume_dir.empty();
  int world = request.context->world_size();
  RunRecord record = resuming ? RunRecord::resumed(run::read_record(run.path()),
                                                   request.command_line, clock(), world)
                              : RunRecord::started(request.command_line, clock(), world);
  if (!resuming) {
    record.plan_stages(stages);
    run.write_config(config_yaml);
  }
  if (!request.note.empty()) run.write_notes(request.note);
  run.write_record(record);
  return record;
}

// Before any step: the fitted columns saved, every rank sure it trains the same job from rank
// 0's weights, every stage checked (a one-batch probe of the loss and metrics too), the inputs
// written.
void prepare_session(RunFolder& run, RunSession& session, const Stages& stages,
                     const TrainRequest& request, const std::string& config_yaml, std::FILE* out) {
  Json preprocessing = session.experiment.preprocessing();
  if (request.resume_dir.empty() && !preprocessing.is_null())
    run.write_preprocessing(preprocessing);
  check_same_job(*request.context, config_yaml, session.experiment.dataset("train")->size());
  broadcast_weights(*session.model, *request.context);
  if (stages.front().config.runtime.distributed.sync_batch_norm)
    std::fprintf(out, "batch norm: %d layer(s) normalize by the statistics of all %d rank(s)\n",
                 synchronize_batch_norms(*session.model, request.context),
                 request.context->world_size());
  check_stages(session, stages);
  run.write_inputs(inputs_json(session.inputs, session.labels));
  run.write_module(*session.model);
}

// How training ended, into summary.json, run.json and TensorBoard's hparams session.
TrainOutcome finish_run(RunFolder& run, RunRecord& record, const engine::TrainResult& result,
                        const TrainRequest& request, const Clock& clock) {
  Json summary = summary_json(result);
  if (!record.stages().is_null()) summary["stages"] = record.stages();
  run.write_summary(summary);
  record.ended(result.stopped_by_signal != 0, clock());
  if (request.trial && request.trial->pruned() && !result.stopped_by_signal)
    record.pruned(*request.trial->pruned());
  if (!result.stopped_by_signal) end_hparams(run, tensorboard::SessionStatus::kSuccess, clock());
  run.write_record(record);
  return {run.path(), result.stopped_by_signal ? 128 + result.stopped_by_signal : 0};
}

void record_failure(RunFolder& run, RunRecord& record, const std::exception& error,
                    const Clock& clock) {
  end_hparams(run, tensorboard::SessionStatus::kFailure, clock());
  record.failed(error.what(), clock());
  run.write_record(record);
}

// The session of the first stage, prepared, trained through every stage.
TrainOutcome train_stages(RunFolder& run, RunRecord& record, const Stages& stages,
                          const engine::Runtime& runtime, const TrainRequest& request,
                          const std::string& config_yaml, std::FILE* out, const Clock& clock) {
  const distributed::Context& context = *request.context;
  RunSession session(stages.front().config, runtime.device, context.rank(), context.world_size(),
                     column_fitting(run.directory(), !request.resume_dir.empty(), request.context));
  // Before batch norms are synchronized across ranks: rank 0 times its steps alone.
  record.channels_last_chosen(
      decide_channels_last(session, record.json(), *request.context, request.quiet ? nullptr : out)
          .record());
  run.write_record(record);
  prepare_session(run, session, stages, request, config_yaml, out);
  engine::TrainResult result =
      train_in(run, session, stages, request, config_yaml, out, clock, record);
  return finish_run(run, record, result, request, clock);
}

}  // namespace

TrainOutcome run_training(const TrainRequest& given, std::FILE* out, Clock clock) {
  ExperimentConfig config = parse_experiment(given.config);
  std::vector<Stage> stages = plan_stages(given.config, config);
  engine::Runtime runtime = runtime_of(config, given.job ? given.job->local_world_size : 1);
  runtime.apply();
  if (given.dry_run) return check_dry_run(stages, runtime, out);
  TrainRequest request = given;
  if (request.job) request.context = join_job(request.job, config);
  bool resuming = !request.resume_dir.empty();
  RunFolder run(run_directory(request, config, clock), request.context->rank());
  run.open_tensorboard(config.tensorboard, clock);
  std::unique_ptr<run::RunLock> lock = run.lock();
  announce_run(run, out);
  if (resuming && finished_as_configured(run.directory(), config))
    return nothing_to_resume(run, out);
  std::string config_yaml = run_config_yaml(run, config, resuming);
  RunRecord record = open_record(run, request, stages, config_yaml, clock);
  record.runtime_chosen(runtime, config.runtime.threads.value == 0,
                        given.job ? given.job->local_world_size : 1);
  try {
    return train_stages(run, record, stages, runtime, request, config_yaml, out, clock);
  } catch (const std::exception& e) {
    record_failure(run, record, e, clock);
    throw;
  }
}

RunEvaluation evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                           const std::string& split, const Clock& clock) {
  run::RunDirectory run = run::RunDirectory::open(run_dir);
  engine::Runtime runtime =
      runtime_of(parse_experiment(load_config({run.file(run::kConfigFile)}, {})));
  runtime.apply();
  OpenedModel opened = open_model(run.path(), checkpoint, runtime.device);
  Experiment experiment(opened.config, runtime.device, 0, 1, saved_columns(run.path()));
  data::Loader loader = experiment.loader(split);
  engine::Objective objective = experiment.build_objective(*opened.model);
  objective.check_targets(loader.dataset().info().target_names, split);
  RunEvaluation evaluation;
  double start = clock();
  evaluation.values = engine::evaluate(*opened.model, loader, objective, runtime.device, split, 0,
                                       &evaluation.examples);
  evaluation.seconds = clock() - start;
  evaluation.unseen = loader.dataset().info().unseen_categories;
  return evaluation;
}

}  // namespace kiln::experiment
