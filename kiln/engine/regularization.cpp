#include "kiln/engine/regularization.h"

#include "kiln/core/suggest.h"
#include "kiln/optim/param_groups.h"

namespace kiln::engine {
namespace {

bool trainable(const torch::Tensor& parameter) { return parameter.requires_grad(); }

// Why `pattern` selects nothing, for the ConfigError: the parameters it matches are 1-D, or it
// matches no trainable name at all.
std::string why_nothing(const std::string& pattern,
                        const torch::OrderedDict<std::string, torch::Tensor>& parameters) {
  std::vector<std::string> names;
  for (const auto& item : parameters) {
    if (!trainable(item.value())) continue;
    if (optim::matches_pattern(pattern, item.key()))
      return "\"" + pattern + "\" matches only 1-D parameters (" + item.key() +
             "); set vectors: true to penalise them";
    names.push_back(item.key());
  }
  return "pattern \"" + pattern + "\" matches no trainable parameter; " +
         suggestion_text(pattern, names);
}

}  // namespace

Regularization::Regularization(const ComponentList& specs,
                               const torch::OrderedDict<std::string, torch::Tensor>& parameters) {
  for (const ComponentSpec& spec : specs.items) {
    Term term{losses::regularizer_registry().create(spec), {}};
    const losses::RegularizerOptions& options = term.regularizer->options();
    for (size_t j = 0; j < options.params.size(); ++j) {
      const std::string& pattern = options.params[j];
      bool selected = false;
      for (const auto& item : parameters) {
        const torch::Tensor& parameter = item.value();
        if (!trainable(parameter) || !optim::matches_pattern(pattern, item.key())) continue;
        if (parameter.dim() < 2 && !options.vectors) continue;
        selected = true;
        bool taken = false;  // by an earlier pattern of this entry
        for (const auto& chosen : term.parameters) taken = taken || chosen.is_same(parameter);
        if (!taken) term.parameters.push_back(parameter);
      }
      if (!selected)
        throw ConfigError(fmt::format("{}.params[{}]", spec.path, j), "",
                          why_nothing(pattern, parameters));
    }
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
