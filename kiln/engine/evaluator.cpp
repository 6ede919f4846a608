#include "kiln/engine/evaluator.h"

namespace kiln::engine {

MetricValues evaluate(models::Model& model, data::Loader& loader, const losses::Loss& loss,
                      std::vector<NamedMetric>& metrics, torch::Device device,
                      const std::string& split) {
  torch::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  for (auto& m : metrics) m.metric->reset();
  double loss_sum = 0;
  int64_t count = 0;
  loader.start_epoch(0);
  while (auto batch = loader.next()) {
    torch::Tensor input = batch->input.to(device), target = batch->target.to(device);
    torch::Tensor output = model.forward(input);
    loss_sum += loss.forward(output, target).item<double>() * double(batch->size());
    count += batch->size();
    for (auto& m : metrics) m.metric->update(output, target);
  }
  model.train(was_training);
  MetricValues values;
  values[split + "/loss"] = count > 0 ? loss_sum / double(count) : 0.0;
  for (auto& m : metrics) values[split + "/" + m.name] = m.metric->value();
  return values;
}

}  // namespace kiln::engine
