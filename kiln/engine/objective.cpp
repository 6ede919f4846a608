#include "kiln/engine/objective.h"

#include <fmt/ranges.h>

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
    : heads_(std::move(heads)), head_loss_sums_(heads_.size(), 0.0) {
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

std::pair<torch::Tensor, double> Objective::head_loss(size_t index, const torch::Tensor& output,
                                                      const data::Batch& batch) {
  Head& head = heads_[index];
  auto measure = [&] {
    const torch::Tensor& target = target_of(head, batch);
    torch::Tensor loss = head.loss->forward(output, target);
    double value = loss.item<double>();  // the one read of this loss (a device sync on CUDA)
    head_loss_sums_[index] += value * double(batch.size());
    torch::NoGradGuard no_grad;
    for (auto& m : head.metrics) m.metric->update(output.detach(), target);
    return std::make_pair(loss, value);
  };
  if (head.name.empty()) return measure();
  // With several heads, a complaint from a loss, a metric or torch names the head it came from.
  try {
    return measure();
  } catch (const Error& e) {
    throw Error(fmt::format("head \"{}\": {}", head.name, e.what()));
  } catch (const c10::Error& e) {
    throw Error(fmt::format("head \"{}\": {}", head.name, e.what_without_backtrace()));
  }
}

torch::Tensor Objective::compute(models::Model& model, const data::Batch& batch) {
  models::NamedOutputs outputs;
  if (heads_.size() == 1 && heads_.front().name.empty())
    outputs.insert("", model.forward(batch.input));
  else
    outputs = model.forward_named(batch.input);
  torch::Tensor total;
  last_loss_ = 0;
  for (size_t i = 0; i < heads_.size(); ++i) {
    auto [loss, value] = head_loss(i, outputs[heads_[i].name], batch);
    total = i == 0 ? loss * heads_[i].weight : total + loss * heads_[i].weight;
    last_loss_ += heads_[i].weight * value;
  }
  loss_sum_ += last_loss_ * double(batch.size());
  examples_ += batch.size();
  return total;
}

void Objective::reset() {
  loss_sum_ = 0;
  examples_ = 0;
  std::fill(head_loss_sums_.begin(), head_loss_sums_.end(), 0.0);
  for (auto& head : heads_)
    for (auto& m : head.metrics) m.metric->reset();
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
  double examples = std::max<double>(1, double(examples_));
  values[split + "/loss"] = loss_sum_ / examples;
  for (size_t i = 0; i < heads_.size(); ++i) {
    const Head& head = heads_[i];
    if (!head.name.empty()) values[tag(split, head, "loss")] = head_loss_sums_[i] / examples;
    for (const auto& m : head.metrics)
      for (const auto& [key, value] : m.metric->values())
        values[metric_tag(split, head, m, key)] = value;
  }
  return values;
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

}  // namespace kiln::engine
