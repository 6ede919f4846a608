#!/usr/bin/env bash
# kiln stands alone: no tracked file points outside the repository (a folder beside it, or notes
# that are not part of it), and every file the tests read is tracked. .ci/run proves the rest by
# running the suite in a clone with nothing beside it.
#
#   tests/deps/standalone_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
cd "$root" || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "standalone: $root is not a git checkout; nothing to check"
  exit 0
fi

failed=0
# Built from pieces so that this file does not match itself.
dotdot='\.\./'
shared="sha""red"
pattern="${dotdot}${shared}|${shared}/testdata|DESI""GN\.md|INTE""ROP\.md"
if outside=$(git grep -n -I -E "$pattern" -- .); then
  echo "tracked files point outside the repository:"
  echo "$outside" | head -20
  failed=1
fi

# Every file under tests/data is tracked (an untracked fixture would pass here and fail in a clone),
# and the penguin link resolves.
untracked=$(git ls-files --others --exclude-standard -- tests/data configs/examples)
[ -z "$untracked" ] || { echo "untracked test files: $untracked"; failed=1; }
[ -s tests/data/tfx_penguin_train.tfrecord.gz ] || { echo "tests/data/tfx_penguin_train.tfrecord.gz does not resolve"; failed=1; }
grep -q '^set(KILN_TESTDATA "${CMAKE_CURRENT_SOURCE_DIR}/tests/data")' CMakeLists.txt ||
  { echo "CMakeLists.txt: KILN_TESTDATA is not tests/data"; failed=1; }

[ $failed -eq 0 ] && echo "standalone: no reference outside the repository"
exit $failed
