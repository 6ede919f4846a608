// adagrad: Adagrad (Duchi, Hazan & Singer), each weight's rate divided by the root of its summed
// squared gradients.

#include <sstream>
#include <string>
#include <type_traits>

#include "kiln/optim/optimizer.h"

namespace kiln::optim {
namespace {

struct AdagradOptions {
  double lr = 0.01;
  double lr_decay = 0.0;
  double eps = 1e-10;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  void describe(Schema& s) {
    s.field("lr", lr, "Learning rate.").min(0);
    s.field("lr_decay", lr_decay, "The rate at step t is lr / (1 + (t - 1) x lr_decay).").min(0);
    s.field("eps", eps, "Added to the denominator for numerical stability.").min(0);
    s.field("weight_decay", weight_decay, "L2 penalty added to the gradient.").min(0);
    s.field("initial_accumulator_value", initial_accumulator_value,
            "The starting value of every weight's sum of squared gradients.")
        .min(0);
  }
};

class Adagrad : public torch::optim::Adagrad {
 public:
  Adagrad(const AdagradOptions& o, std::vector<torch::Tensor> params)
      : torch::optim::Adagrad(std::move(params),
                              torch::optim::AdagradOptions(o.lr)
                                  .lr_decay(o.lr_decay)
                                  .eps(o.eps)
                                  .weight_decay(o.weight_decay)
                                  .initial_accumulator_value(o.initial_accumulator_value)) {}

  torch::Tensor step(LossClosure closure = nullptr) override {
    add_missing_states();
    return torch::optim::Adagrad::step(std::move(closure));
  }

 private:
  // LibTorch's Adagrad makes each parameter's state in its constructor only, and its step()
  // fails on a parameter without one: the groups train.lr_scales adds later need theirs made.
  void add_missing_states() {
    using Key = typename std::decay_t<decltype(state_)>::key_type;
    for (const auto& group : param_groups_) {
      const auto& options = static_cast<const torch::optim::AdagradOptions&>(group.options());
      for (const auto& p : group.params()) {
        Key key = state_key<Key>(p);
        if (state_.count(key)) continue;
        auto state = std::make_unique<torch::optim::AdagradParamState>();
        state->step(0);
        state->sum(torch::full_like(p.data(), options.initial_accumulator_value(),
                                    at::MemoryFormat::Preserve));
        state_[key] = std::move(state);
      }
    }
  }
  // LibTorch 1.13 keys the states by the tensor's address as text, 2.x by the address itself.
  template <class Key>
  static Key state_key(const torch::Tensor& p) {
    if constexpr (std::is_same_v<Key, std::string>) {
      std::ostringstream text;  // as c10::guts::to_string writes it
      text << p.unsafeGetTensorImpl();
      return text.str();
    } else {
      return static_cast<Key>(p.unsafeGetTensorImpl());
    }
  }
};

}  // namespace

KILN_REGISTER(optimizer_registry, "adagrad", Adagrad, AdagradOptions,
              "Adagrad: each weight's rate divided by the root of its summed squared gradients.");

}  // namespace kiln::optim
