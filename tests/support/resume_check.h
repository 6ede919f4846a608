#pragma once
// The end-to-end check that a run killed with SIGKILL and resumed ends as one never interrupted:
// the same last checkpoint, its files bitwise equal, the same validation rows.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_command.h"
#include "tests/support/run_files.h"

namespace kiln::testing {

/// Runs `straight` (a `kiln train` command) to its end; runs `killed` (the same training into
/// another folder), kills it with SIGKILL after `lines` lines of output and finishes it with
/// `kiln` train --resume; compares each of `files` of the two last checkpoints.
inline void expect_resumed_as_straight(const std::string& kiln, const std::string& straight,
                                       const std::string& killed, int lines,
                                       const std::vector<std::string>& files) {
  auto whole = run_command(straight);
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  auto [run, signal_exit] = interrupt(killed, lines, SIGKILL);
  ASSERT_EQ(signal_exit, 128 + SIGKILL);
  auto resumed = run_command(kiln + " train --resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  std::string a = latest_checkpoint(run_dir_of(whole.out)), b = latest_checkpoint(run);
  EXPECT_EQ(std::filesystem::path(a).filename(), std::filesystem::path(b).filename());
  for (const std::string& file : files)
    EXPECT_TRUE(read_file(a + "/" + file) == read_file(b + "/" + file))
        << file << " differs from the uninterrupted run's";
  EXPECT_EQ(validation_rows(run_dir_of(whole.out)), validation_rows(run));
}

}  // namespace kiln::testing
