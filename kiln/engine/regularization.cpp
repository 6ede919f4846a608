#include "kiln/engine/regularization.h"

#include "kiln/core/config_path.h"
#include "kiln/core/suggest.h"
#include "kiln/optim/param_groups.h"

namespace kiln::engine {
namespace {

using NamedParameters = torch::OrderedDict<std::string, torch::Tensor>;

bool trainable(const torch::Tensor& parameter) { return parameter.requires_grad(); }

// Why `pattern` selects nothing, for the ConfigError: what it matches is 1-D or frozen, or it
// matches no name at all.
std::string why_nothing(const std::string& pattern, const NamedParameters& parameters) {
  std::string vector, frozen;      // the first such parameter the pattern matches
  std::vector<std::string> names;  // the trainable ones
  for (const auto& item : parameters) {
    bool matched = optim::matches_pattern(pattern, item.key());
    std::string& kind = trainable(item.value()) ? vector : frozen;
    if (matched && kind.empty()) kind = item.key();
    if (trainable(item.value())) names.push_back(item.key());
  }
  if (!vector.empty())
    return "\"" + pattern + "\" matches only 1-D parameters (" + vector +
           "); set vectors: true to penalise them";
  if (!frozen.empty())
    return "\"" + pattern + "\" matches only frozen parameters (" + frozen + ", train.freeze)";
  return "pattern \"" + pattern + "\" matches no trainable parameter; " +
         suggestion_text(pattern, names);
}

// Adds the parameters `pattern` selects to `chosen` (once each); false when it selects none.
bool select(const std::string& pattern, const losses::RegularizerOptions& options,
            const NamedParameters& parameters, std::vector<torch::Tensor>& chosen) {
  bool selected = false;
  for (const auto& item : parameters) {
    const torch::Tensor& parameter = item.value();
    if (!trainable(parameter) || !optim::matches_pattern(pattern, item.key())) continue;
    if (parameter.dim() < 2 && !options.vectors) continue;
    selected = true;
    bool taken = false;  // by an earlier pattern of the same entry
    for (const auto& earlier : chosen) taken = taken || earlier.is_same(parameter);
    if (!taken) chosen.push_back(parameter);
  }
  return selected;
}

}  // namespace

Regularization::Regularization(std::vector<RegularizerEntry> entries,
                               const NamedParameters& parameters) {
  for (RegularizerEntry& entry : entries) {
    Term term{std::move(entry.regularizer), {}};
    const losses::RegularizerOptions& options = term.regularizer->options();
    for (size_t j = 0; j < options.params.size(); ++j)
      if (!select(options.params[j], options, parameters, term.parameters))
        throw ConfigError(index_path(entry.path + ".params", j), "",
                          why_nothing(options.params[j], parameters));
    terms_.push_back(std::move(term));
  }
}

torch::Tensor Regularization::penalty() const {
  torch::Tensor total;
  for (const Term& term : terms_) {
    torch::Tensor sum;
    for (const auto& parameter : term.parameters) {
      torch::Tensor cost = term.regularizer->penalty(parameter);
      sum = sum.defined() ? sum + cost : cost;
    }
    torch::Tensor weighted = sum * term.regularizer->options().weight;
    total = total.defined() ? total + weighted : weighted;
  }
  return total;
}

}  // namespace kiln::engine
