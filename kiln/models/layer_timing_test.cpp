#include "kiln/models/layer_timing.h"

#include <gtest/gtest.h>

namespace kiln::models {
namespace layer_timing_test {

// Two linear layers called through models::call, as networks call their children; an outer
// module calls it the same way, so that its call holds theirs.
struct TwoLayersImpl : torch::nn::Module {
  TwoLayersImpl()
      : first(register_module("first", torch::nn::Linear(4, 8))),
        second(register_module("second", torch::nn::Linear(8, 3))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return call(second, torch::relu(call(first, x)));
  }
  torch::nn::Linear first, second;
};
TORCH_MODULE(TwoLayers);

struct OuterImpl : torch::nn::Module {
  OuterImpl() : inner(register_module("inner", TwoLayers())) {}
  torch::Tensor forward(const torch::Tensor& x) { return call(inner, x); }
  TwoLayers inner;
};
TORCH_MODULE(Outer);

// Linear, batch norm and ReLU, twice: the batch norm's outputs are not kept for backward (ReLU
// keeps its result), so their memory is free for the next tensors while the step goes on.
struct ChainImpl : torch::nn::Module {
  ChainImpl() {
    for (int i = 0; i < 2; ++i) {
      layers.emplace_back(register_module("linear" + std::to_string(i), torch::nn::Linear(6, 6)));
      layers.emplace_back(register_module("norm" + std::to_string(i), torch::nn::BatchNorm1d(6)));
      layers.emplace_back(register_module("relu" + std::to_string(i), torch::nn::ReLU()));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& layer : layers) {
      observe_begin(*layer.ptr());
      torch::Tensor y = layer.forward(x);
      observe(*layer.ptr(), x, y);
      x = y;
    }
    return x;
  }
  std::vector<torch::nn::AnyModule> layers;
};
TORCH_MODULE(Chain);

// Every reading one tick later: an order of events becomes an order of numbers.
struct Ticks {
  double now = 0;
  int readings = 0;
  LayerTimer::Clock clock() {
    return [this] {
      ++readings;
      return now += 1;
    };
  }
};

TEST(LayerTimer, TimesForwardInCallOrderAndBackwardInReverse) {
  TwoLayers net;
  Ticks ticks;
  LayerTimer timer(*net, ticks.clock());
  net->forward(torch::randn({2, 4})).sum().backward();
  std::vector<LayerTimes> calls = timer.take();
  ASSERT_EQ(calls.size(), 2u);
  const LayerTimes &first = calls[0], &second = calls[1];
  EXPECT_EQ(first.module, net->first.get());
  EXPECT_EQ(second.module, net->second.get());
  EXPECT_LT(first.forward_begin, first.forward_end);
  EXPECT_LT(first.forward_end, second.forward_begin);
  // Backward runs after the forward, the last layer first; each ends when the gradients of its
  // input (second) or of its parameters (first: its input is data) are ready.
  EXPECT_GT(second.backward_begin, second.forward_end);
  EXPECT_LT(second.backward_begin, second.backward_end);
  EXPECT_LE(second.backward_end, first.backward_begin);
  EXPECT_LT(first.backward_begin, first.backward_end);
  // The activations kept: [2, 8] and [2, 3] floats.
  EXPECT_EQ(first.output_bytes, 2 * 8 * 4);
  EXPECT_EQ(second.output_bytes, 2 * 3 * 4);
}

TEST(LayerTimer, AnOuterCallHoldsItsChildrensCalls) {
  Outer net;
  Ticks ticks;
  LayerTimer timer(*net, ticks.clock());
  net->forward(torch::randn({2, 4})).sum().backward();
  std::vector<LayerTimes> calls = timer.take();
  ASSERT_EQ(calls.size(), 3u);
  const LayerTimes &outer = calls[0], &first = calls[1], &second = calls[2];
  EXPECT_EQ(outer.module, net->inner.get());
  EXPECT_LT(outer.forward_begin, first.forward_begin);
  EXPECT_GT(outer.forward_end, second.forward_end);
  EXPECT_LE(outer.backward_begin, second.backward_begin);
  EXPECT_GE(outer.backward_end, first.backward_end);
}

// A tensor freed during the forward leaves its address to a later one: each call keeps its own
// backward all the same.
TEST(LayerTimer, EveryCallOfAChainHasItsBackward) {
  Chain net;
  Ticks ticks;
  LayerTimer timer(*net, ticks.clock());
  net->forward(torch::randn({4, 6})).sum().backward();
  std::vector<LayerTimes> calls = timer.take();
  ASSERT_EQ(calls.size(), 6u);
  for (size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_GT(calls[i].backward_begin, calls[i].forward_end);
    EXPECT_GT(calls[i].backward_end, calls[i].backward_begin);
    if (i > 0) {
      EXPECT_LT(calls[i].backward_begin, calls[i - 1].backward_begin);
    }
  }
}

TEST(LayerTimer, CallsWithoutGradientsHaveNoBackward) {
  TwoLayers net;
  Ticks ticks;
  LayerTimer timer(*net, ticks.clock());
  {
    torch::NoGradGuard no_grad;
    net->forward(torch::randn({2, 4}));
  }
  std::vector<LayerTimes> calls = timer.take();
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& call : calls) {
    EXPECT_GT(call.forward_end, call.forward_begin);
    EXPECT_EQ(call.backward_begin, 0);
    EXPECT_EQ(call.backward_end, 0);
  }
}

TEST(LayerTimer, ABackwardAfterItsCallsWereTakenTimesNothing) {
  TwoLayers net;
  Ticks ticks;
  LayerTimer timer(*net, ticks.clock());
  torch::Tensor loss = net->forward(torch::randn({2, 4})).sum();
  EXPECT_EQ(timer.take().size(), 2u);
  loss.backward();
  EXPECT_TRUE(timer.take().empty());
}

TEST(LayerTimer, StopsListeningWhenDestroyed) {
  TwoLayers net;
  Ticks ticks;
  { LayerTimer timer(*net, ticks.clock()); }
  int readings = ticks.readings;
  net->forward(torch::randn({2, 4})).sum().backward();
  EXPECT_EQ(ticks.readings, readings);
  // A second timer starts from nothing.
  LayerTimer again(*net, ticks.clock());
  net->forward(torch::randn({2, 4}));
  EXPECT_EQ(again.take().size(), 2u);
}

}  // namespace layer_timing_test
}  // namespace kiln::models
