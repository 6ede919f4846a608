#pragma once
// The scalars TensorBoard shows for one run directory, worked out as TensorBoard's event
// accumulator does (purge_orphaned_data on, its default): files are read in the order of their
// names; in files of version brain.Event:2 (what kiln writes) SessionLog START at step s drops
// every point at s or later read so far, and nothing else is dropped. Built on the
// tests' own event file decoder, so that a kiln run's files can be checked for what a user sees.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::testing {

/// (step, value) points by tag, in the order TensorBoard keeps them.
using ScalarSeries = std::map<std::string, std::vector<std::pair<int64_t, double>>>;

ScalarSeries tensorboard_scalars(const std::string& directory);

}  // namespace kiln::testing
