#include "kiln/engine/objective.h"

#include <fmt/ranges.h>

#include "kiln/core/config_path.h"
#include "kiln/core/error.h"

namespace kiln::engine {

namespace {

// Names each metric by its tag_name(); two with the same name would overwrite each other's values.
void name_metrics(Objective::Head& head) {
  std::map<std::string, std::string> configured;  // tag name -> the registry name it came from
  for (NamedMetric& m : head.metrics) {
    std::string registered = m.name;
    m.name = m.metric->tag_name(registered);
    auto [clash, fresh] = configured.emplace(m.name, registered);
    if (!fresh)
      throw ConfigError(
          head.config_path.empty() ? "metrics" : head.config_path + ".metrics", "",
          fmt::format("\"{}\" and \"{}\" would both be reported as {}; give them different "
                      "options (or list the metric once)",
                      clash->second, registered, m.name));
  }
}

}  // namespace

Objective::Objective(std::vector<Head> heads)
    : heads_(std::move(heads)),
      head_loss_sums_(heads_.size()),
      head_loss_weights_(heads_.size(), 0.0) {
  KILN_ASSERT(!heads_.empty());
  for (Head& head : heads_) name_metrics(head);
}

namespace {

// What a head may compare with, given the data's named targets, for messages.
std::string known_targets(const std::vector<std::string>& named) {
  std::vector<std::string> known{"target", "input"};
  known.insert(known.end(), named.begin(), named.end());
  return fmt::format("{} (the tfrecord dataset delivers the features its `targets:` lists)",
                     fmt::join(known, ", "));
}

}  // namespace

const torch::Tensor& Objective::target_of(const Head& head, const data::Batch& batch) const {
  if (head.target == "target") return batch.target;
  if (head.target == "input") return batch.input;
  auto found = batch.targets.find(head.target);
  if (found != batch.targets.end()) return found->second;
  // check_targets() normally says this before any work; a caller that skipped it hears it here.
  std::vector<std::string> named;
  for (const auto& item : batch.targets) named.push_back(item.first);
  throw Error(
      fmt::format("head \"{}\" wants target \"{}\", which the data does not deliver; it "
                  "has: {}",
                  head.name, head.target, known_targets(named)));
}

void Objective::check_targets(const std::vector<std::string>& available,
                              const std::string& split) const {
  for (const Head& head : heads_) {
    if (head.target == "target" || head.target == "input") continue;
    if (std::find(available.begin(), available.end(), head.target) != available.end()) continue;
    throw ConfigError(head.config_path + ".target", "",
                      fmt::format("the {} data has no target \"{}\"; it has: {}", split,
                                  head.target, known_targets(available)));
  }
}

namespace {

// Where a head's loss or metric is configured: `loss`, `metrics[1]`, `model.heads[0].loss`.
std::string component_path(const Objective::Head& head, const std::string& key) {
  return head.config_path.empty() ? key : head.config_path + "." + key;
}

// Runs `measure` (a loss or metric on the model's outputs) so that what it refuses is a config
// error at its config path. Its own ConfigErrors name the option, relative to it (class_weights);
// its other complaints (shapes, classes out of range) are about the component as configured.
// Data and file errors stay what they are.
template <class Measure>
auto at_config_path(const std::string& path, Measure measure) {
  try {
    return measure();
  } catch (const ConfigError& e) {
    throw ConfigError(e.path().empty() ? path : path + "." + e.path(), e.origin(), e.problem());
  } catch (const DataError&) {
    throw;
  } catch (const IoError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(path, "", e.what());
  }
}

// A target the loss refuses, as a DataError naming the record (or example) it came from and the
// feature it was read from.
[[noreturn]] void bad_target(const data::Batch& batch, const std::string& head_target,
                             const losses::BadTarget& bad) {
  data::ExampleOrigin origin =
      batch.origin ? batch.origin(bad.row) : data::ExampleOrigin{{"", -1, -1}, ""};
  std::string feature = head_target == "target" ? origin.target_feature : head_target;
  std::string problem = feature.empty() ? "target: " + bad.problem
                                        : fmt::format("feature \"{}\": {}", feature, bad.problem);
  if (!origin.where.file.empty())
    throw DataError(origin.where.file, origin.where.record, origin.where.offset, problem);
  std::string example = origin.where.record >= 0
                            ? fmt::format("example {} of the dataset", origin.where.record)
                            : fmt::format("row {} of a batch", bad.row);
  throw DataError(example, -1, -1, problem);
}

}  // namespace

const torch::Tensor& Objective::host_target_of(const Head& head, const data::Batch& batch) const {
  if (head.target == "target" && batch.host_target.defined()) return batch.host_target;
  auto found = batch.host_targets.find(head.target);
  if (found != batch.host_targets.end()) return found->second;
  return target_of(head, batch);
}

void Objective::add_loss(size_t index, const torch::Tensor& loss, double weight) {
  if (weight <= 0) return;  // all of a batch's targets of class weight 0: torch's mean is 0/0
  // The batch's mean, times what it divides by: the sums give the mean over the whole set. Summed
  // on the loss's device in double precision, read when the values are.
  torch::NoGradGuard no_grad;
  torch::Tensor& sum = head_loss_sums_[index].on_device;
  if (!sum.defined()) sum = torch::zeros({}, loss.options().dtype(torch::kFloat64));
  sum.add_(loss.dim() == 0 ? loss : loss.reshape({}), weight);  // a [1] loss counts as a scalar
  head_loss_weights_[index] += weight;
}

torch::Tensor Objective::head_loss(size_t index, const torch::Tensor& output,
                                   const data::Batch& batch) {
  Head& head = heads_[index];
  auto measure = [&] {
    const torch::Tensor& target = target_of(head, batch);
    // Checked in host memory: a bad class is reported before LibTorch meets it, without a wait.
    const torch::Tensor& host_target = host_target_of(head, batch);
    if (auto bad = head.loss->check_targets(output, host_target))
      bad_target(batch, head.target, *bad);
    torch::Tensor loss = at_config_path(component_path(head, "loss"),
                                        [&] { return head.loss->forward(output, target); });
    add_loss(index, loss, head.loss->mean_weight(output, host_target));
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < head.metrics.size(); ++i)
      at_config_path(component_path(head, index_path("metrics", i)),
                     [&] { head.metrics[i].metric->update(output.detach(), target); });
    return loss;
  };
  if (head.name.empty()) return measure();
  // With several heads, a complaint from a loss, a metric or torch names the head it came from.
  try {
    return measure();
  } catch (const ConfigError&) {
    throw;  // its path names the head
  } catch (const Error& e) {
    throw Error(fmt::format("head \"{}\": {}", head.name, e.what()));
  } catch (const c10::Error& e) {
    throw Error(fmt::format("head \"{}\": {}", head.name, e.what_without_backtrace()));
  }
}

torch::Tensor Objective::compute(models::Model& model, const data::Batch& batch,
                                 models::NamedOutputs* shown) {
  models::NamedOutputs outputs = forward(model, batch.input);
  torch::Tensor total = compute_outputs(outputs, batch);
  if (shown) *shown = std::move(outputs);
  return total;
}

models::NamedOutputs Objective::forward(models::Model& model, const torch::Tensor& input) const {
  models::NamedOutputs outputs;
  if (heads_.size() == 1 && heads_.front().name.empty())
    outputs.insert("", model.forward(input));
  else
    outputs = model.forward_named(input);
  return outputs;
}

torch::Tensor Objective::compute_outputs(const models::NamedOutputs& outputs,
                                         const data::Batch& batch) {
  if (!observers_.empty())
    for (size_t i = 0; i < heads_.size(); ++i) {
      const Head& head = heads_[i];
      HeadOutput shown{head.name, outputs[head.name], target_of(head, batch), i == 0,
                       head.loss->scores()};
      for (const OutputObserver& observer : observers_) observer(batch, shown);
    }
  torch::Tensor total;
  for (size_t i = 0; i < heads_.size(); ++i) {
    torch::Tensor loss = head_loss(i, outputs[heads_[i].name], batch);
    // A weight of 1 multiplies by nothing: one launch fewer for the usual single head.
    if (heads_[i].weight != 1.0) loss = loss * heads_[i].weight;
    total = i == 0 ? loss : total + loss;
  }
  last_loss_ = total.detach();
  return total;
}

void Objective::reset() {
  for (LossSum& sum : head_loss_sums_) sum = LossSum{};
  std::fill(head_loss_weights_.begin(), head_loss_weights_.end(), 0.0);
  for (auto& head : heads_)
    for (auto& m : head.metrics) m.metric->reset();
}

double Objective::LossSum::value() const {
  return on_host + (on_device.defined() ? on_device.item<double>() : 0.0);
}

std::string Objective::tag(const std::string& split, const Head& head,
                           const std::string& what) const {
  return head.name.empty() ? split + "/" + what : split + "/" + head.name + "/" + what;
}

std::string Objective::metric_tag(const std::string& split, const Head& head,
                                  const NamedMetric& metric, const std::string& key) const {
  return tag(split, head, key.empty() ? metric.name : metric.name + "/" + key);
}

MetricValues Objective::values(const std::string& split) const {
  MetricValues values;
  double total = 0;
  for (size_t i = 0; i < heads_.size(); ++i) {
    const Head& head = heads_[i];
    double mean = head_loss_sums_[i].value() / std::max(head_loss_weights_[i], 1e-300);
    total += head.weight * mean;
    if (!head.name.empty()) values[tag(split, head, "loss")] = mean;
    for (const auto& m : head.metrics)
      for (const auto& [key, value] : m.metric->values())
        values[metric_tag(split, head, m, key)] = value;
  }
  values[split + "/loss"] = total;
  return values;
}

bool Objective::saw_examples() const {
  return std::any_of(head_loss_weights_.begin(), head_loss_weights_.end(),
                     [](double weight) { return weight > 0; });
}

std::vector<std::string> Objective::tags(const std::string& split) const {
  std::vector<std::string> tags{split + "/loss"};
  for (const Head& head : heads_) {
    if (!head.name.empty()) tags.push_back(tag(split, head, "loss"));
    for (const auto& m : head.metrics)
      for (const auto& key : m.metric->value_keys())
        tags.push_back(metric_tag(split, head, m, key));
  }
  return tags;
}

Objective::Statistics Objective::statistics() const {
  Statistics statistics;
  for (size_t i = 0; i < heads_.size(); ++i) {
    statistics.parts.push_back({head_loss_sums_[i].value(), head_loss_weights_[i]});
    statistics.summable.push_back(true);
    for (const auto& m : heads_[i].metrics) {
      statistics.parts.push_back(m.metric->sums());
      statistics.summable.push_back(m.metric->summable());
    }
  }
  return statistics;
}

void Objective::set_statistics(const Statistics& statistics) {
  size_t part = 0;
  for (size_t i = 0; i < heads_.size(); ++i) {
    const std::vector<double>& loss = statistics.parts.at(part++);
    KILN_ASSERT(loss.size() == 2);
    head_loss_sums_[i] = LossSum{loss[0], {}};
    head_loss_weights_[i] = loss[1];
    for (auto& m : heads_[i].metrics) m.metric->set_sums(statistics.parts.at(part++));
  }
  KILN_ASSERT(part == statistics.parts.size());
}

void combine_over_ranks(Objective& objective, distributed::Context& context) {
  if (context.world_size() == 1) return;
  const Objective::Statistics mine = objective.statistics();
  Objective::Statistics statistics = mine;
  // Each part is gathered whole: a rank that saw no example may hold no statistics at all (an
  // empty confusion matrix), which a flat reduction would misalign.
  for (size_t i = 0; i < statistics.parts.size(); ++i) {
    std::vector<double>& part = statistics.parts[i];
    part.clear();
    for (const std::vector<double>& theirs : context.all_gather(mine.parts[i])) {
      if (!statistics.summable[i] || part.empty()) {
        part.insert(part.end(), theirs.begin(), theirs.end());
      } else if (!theirs.empty()) {
        KILN_ASSERT(theirs.size() == part.size());
        for (size_t k = 0; k < part.size(); ++k) part[k] += theirs[k];
      }
    }
  }
  objective.set_statistics(statistics);
}

}  // namespace kiln::engine
