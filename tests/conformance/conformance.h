#pragma once
// What the layer and network conformance tests share.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace kiln::conformance {

/// Fails for each parameter of `module` that the last backward() left without a gradient, or
/// with an all-zero one.
inline void expect_gradients_reach_every_parameter(const torch::nn::Module& module) {
  for (const auto& parameter : module.named_parameters()) {
    ASSERT_TRUE(parameter.value().grad().defined()) << parameter.key() << " got no gradient";
    EXPECT_GT(parameter.value().grad().abs().sum().item<double>(), 0) << parameter.key();
  }
}

/// The names of a table of examples, one test each.
template <class Example>
std::vector<std::string> names_of(const std::map<std::string, Example>& examples) {
  std::vector<std::string> names;
  for (const auto& item : examples) names.push_back(item.first);
  return names;
}

}  // namespace kiln::conformance
