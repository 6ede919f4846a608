#pragma once
// The whole `kiln` command line as a function, for a user's own executable that links the
// installed kiln::kiln package and registers its own components (docs/extending.md):
//
//   int main(int argc, char** argv) { return kiln::run_cli(argc, argv); }

namespace kiln {

/// Parses arguments, runs the subcommand, maps errors to exit codes (docs/design.md §5): 0 success,
/// 1 runtime error, 2 usage or config error, 3 internal error. First sets the process's malloc
/// to keep freed memory for reuse (apps/kiln/allocator.h), which makes large batches faster.
int run_cli(int argc, char** argv);

}  // namespace kiln
